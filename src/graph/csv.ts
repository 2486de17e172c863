/**
 * AutoGRAMS 0.1 spreadsheets (CSV): one row per node, one column per node field, cells separated by
 * commas, semicolons or tabs, as the header row shows. Headers are matched case-insensitively with
 * spaces or underscores. Every column the reference reads is read here; the four
 * it stores and never reads are ignored quietly; any other column is reported, never dropped without a
 * word. A spreadsheet carries no config, so it runs under AutoGRAMS' defaults (`autogramsConfig`), its
 * code in Python as in AutoGRAMS. Export guards against formulas (see `neutralizeCell`), and import undoes
 * exactly what export did.
 */
import { isDeepStrictEqual } from 'node:util';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { InvalidFileError } from '../errors.js';
import { codeLanguage, hasCode } from './language.js';
import { splitTopLevel } from './parse.js';
import { summarizeIssues } from './schema-issues.js';
import {
  GRAPH_FORMAT,
  graphConfigSchema,
  nodeSpecSchema,
  type GraphConfig,
  type GraphFile,
  type NodeSpec,
  type NodeSpecInput,
} from './schema.js';
import { compileGraph } from './view.js';

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/** How a cell holds its field: text as it is, a number, or a comma-separated list of names or numbers. */
type CellKind = 'text' | 'number' | 'names' | 'numbers';

/** A node field kept in one column: its normalized header, the header written on export, and its kind. */
interface Column {
  key: string;
  field: keyof NodeSpec;
  header: string;
  kind: CellKind;
}

/** The columns besides Name, Action, Transitions and the lettered ones, in the order export writes them. */
const COLUMNS: readonly Column[] = [
  { key: 'instruction', field: 'instruction', header: 'Instruction', kind: 'text' },
  { key: 'question_prompt', field: 'questionPrompt', header: 'Question Prompt', kind: 'text' },
  { key: 'transition_question', field: 'transitionQuestion', header: 'Transition Question', kind: 'text' },
  { key: 'boolean_condition', field: 'booleanCondition', header: 'Boolean Condition', kind: 'text' },
  {
    key: 'condition_interjection',
    field: 'conditionInterjection',
    header: 'Condition Interjection',
    kind: 'text',
  },
  { key: 'example_interjection', field: 'exampleInterjection', header: 'Example Interjection', kind: 'text' },
  { key: 'user_interjection', field: 'userInterjection', header: 'User Interjection', kind: 'text' },
  {
    key: 'probability_interjection',
    field: 'probabilityInterjection',
    header: 'Probability Interjection',
    kind: 'number',
  },
  { key: 'prerequisite_states', field: 'prerequisiteNodes', header: 'Prerequisite States', kind: 'names' },
  { key: 'blocking_states', field: 'blockingNodes', header: 'Blocking States', kind: 'names' },
  { key: 'up_weight_states', field: 'upWeightNodes', header: 'Up Weight States', kind: 'names' },
  { key: 'down_weight_states', field: 'downWeightNodes', header: 'Down Weight States', kind: 'names' },
  { key: 'required_revisit', field: 'requiredRevisit', header: 'Required Revisit', kind: 'names' },
  { key: 'transition_probs', field: 'transitionProbs', header: 'Transition Probs', kind: 'numbers' },
  { key: 'state_category', field: 'category', header: 'State Category', kind: 'text' },
  { key: 'conv_scope', field: 'conversationScope', header: 'Conv Scope', kind: 'text' },
  { key: 'transition_context', field: 'transitionContext', header: 'Transition Context', kind: 'number' },
  { key: 'reply_start', field: 'replyStart', header: 'Reply Start', kind: 'text' },
  { key: 'instruction_template', field: 'instructionTemplate', header: 'Instruction Template', kind: 'text' },
  { key: 'notes', field: 'notes', header: 'Notes', kind: 'text' },
];

/**
 * Columns AutoGRAMS 0.1 accepts but never reads (autograms/nodes/base_node.py stores `instruction_short`
 * and `conv_context` and nothing uses them; `lineno` and `def_type` only label its error messages).
 */
const IGNORED_COLUMNS = new Set(['instruction_short', 'conv_context', 'lineno', 'def_type']);

const CHOICE = /^transition_choice_([a-z])$/;
const USER_INSTRUCTION = /^user_instruction_transition_([a-z])$/;

/**
 * The config a spreadsheet runs under: AutoGRAMS' `AutogramConfig()` defaults
 * (autograms/autogram_config.py) where they differ from a native graph's: the default prompts, a
 * classifier that sees the last exchange only (`default_transition_context=1`), and the chatbot's
 * sampling (`CHATBOT_GENERATION_ARGS` temperature 0.7; max_tokens 512 from models/openai_chatbot.py);
 * and Python, the language of its code, conditions and call arguments (autograms/nodes/python_nodes.py).
 */
export function autogramsConfig(): GraphConfig {
  return graphConfigSchema.parse({
    language: 'python',
    prompt: 'You are an agent.',
    userPrompt: 'You are a user.',
    transitionContext: 1,
    generation: { temperature: 0.7, maxTokens: 512 },
  });
}

/** `Transition Choice A`, `transition_choice_a` and `TRANSITION  CHOICE-A` all become `transition_choice_a`. */
export function normalizeHeader(header: string): string {
  return header
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, '_');
}

function isKnown(key: string): boolean {
  return (
    ['name', 'action', 'transitions'].includes(key) ||
    IGNORED_COLUMNS.has(key) ||
    COLUMNS.some((column) => column.key === key) ||
    CHOICE.test(key) ||
    USER_INSTRUCTION.test(key)
  );
}

/** Reads an AutoGRAMS spreadsheet. `source` names the file in messages; `name` becomes the graph's name. */
export function graphFromCsv(
  text: string,
  options: { name: string; source: string },
): { file: GraphFile; warnings: string[] } {
  const rows = readRows(text, options.source);
  const header = rows.shift();
  if (!header) throw new InvalidFileError(`${options.source}: the file is empty`);
  const keys = header.cells.map(normalizeHeader);
  checkColumns(keys, header.cells, options.source);

  const nodes: NodeSpec[] = [];
  const valued = new Set<number>();
  for (const { line, cells } of rows) {
    const row = { line, cells: cells.map(restoreCell) };
    if (row.cells.every((cell) => cell.trim() === '')) continue;
    const cell = (key: string): string => row.cells[keys.indexOf(key)] ?? '';
    row.cells.forEach((value, i) => {
      if (value.trim() !== '') valued.add(i);
    });
    const name = cell('name').trim();
    const where = `${options.source} line ${row.line}${name ? ` (node ${name})` : ''}`;
    if (!name) throw new InvalidFileError(`${where}: the row has no Name`);
    const input = nodeFromRow(name, keys, row.cells);
    const parsed = nodeSpecSchema.safeParse(input);
    if (!parsed.success) throw new InvalidFileError(`${where}: ${summarizeIssues(parsed.error, input)}`);
    nodes.push(parsed.data);
  }
  if (nodes.length === 0) throw new InvalidFileError(`${options.source}: the spreadsheet has no node rows`);

  const file: GraphFile = {
    format: GRAPH_FORMAT,
    name: options.name,
    description: '',
    config: autogramsConfig(),
    nodes,
  };
  return { file, warnings: columnWarnings(keys, header.cells, valued, options.source) };
}

interface Row {
  line: number;
  cells: string[];
}

/** The cell separators spreadsheet programs write: a comma, a semicolon where the comma is the decimal sign, a tab. */
const DELIMITERS = [',', ';', '\t'] as const;

/**
 * The separator of a spreadsheet: the one its header row uses most outside quotes (a comma on a tie).
 * Only one is ever used, so that a semicolon or a tab inside an instruction stays text.
 */
function delimiterOf(text: string): string {
  const counts = new Map<string, number>(DELIMITERS.map((d) => [d, 0]));
  let quoted = false;
  for (const char of text) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && (char === '\n' || char === '\r')) break;
    else if (!quoted && counts.has(char)) counts.set(char, counts.get(char)! + 1);
  }
  return DELIMITERS.reduce((best, d) => (counts.get(d)! > counts.get(best)! ? d : best));
}

function readRows(text: string, source: string): Row[] {
  try {
    const records = parse(text, {
      bom: true,
      delimiter: delimiterOf(text),
      relax_column_count: true,
      info: true,
    }) as unknown as {
      record: string[];
      info: { lines: number };
    }[];
    // csv-parse reports the line a record ends on; a quoted multi-line cell started earlier.
    return records.map(({ record, info }) => ({
      line: info.lines - record.reduce((n, cell) => n + (cell.match(/\n/g)?.length ?? 0), 0),
      cells: record,
    }));
  } catch (error) {
    const line = (error as { lines?: number }).lines;
    throw new InvalidFileError(
      `${source}${line ? ` line ${line}` : ''}: not a readable CSV file: ${(error as Error).message}`,
    );
  }
}

function checkColumns(keys: string[], headers: string[], source: string): void {
  for (const [key, header] of [
    ['name', 'Name'],
    ['action', 'Action'],
  ] as const)
    if (!keys.includes(key))
      throw new InvalidFileError(
        `${source}: no "${header}" column`,
        keys.length === 1
          ? `the header row is one column, "${headers[0]}": separate its cells with commas, semicolons or tabs`
          : 'an AutoGRAMS spreadsheet has a header row with at least the columns Name, Action and Instruction',
      );
  keys.forEach((key, i) => {
    const first = keys.indexOf(key);
    if (key && first !== i)
      throw new InvalidFileError(
        `${source}: columns "${headers[first]}" and "${headers[i]}" are the same field`,
      );
  });
}

function nodeFromRow(name: string, keys: string[], cells: string[]): NodeSpecInput {
  const at = (key: string): string => cells[keys.indexOf(key)] ?? '';
  const action = at('action').trim();
  const node: Record<string, unknown> = {
    name,
    action: action === 'python_function' ? 'code' : action,
    transitions: splitTopLevel(at('transitions')).filter((t) => t !== ''),
    transitionChoices: lettered(keys, cells, CHOICE),
    userInstructions: lettered(keys, cells, USER_INSTRUCTION),
  };
  for (const column of COLUMNS) {
    const cell = at(column.key);
    if (cell.trim() !== '') node[column.field] = readCell(cell, column.kind);
  }
  return node as NodeSpecInput;
}

/** A cell's value; text that is not the number a field wants stays text, for the schema to report. */
function readCell(cell: string, kind: CellKind): unknown {
  const list = () =>
    cell
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
  switch (kind) {
    case 'text':
      return cell;
    case 'number':
      return numberOrText(cell.trim());
    case 'names':
      return list();
    case 'numbers':
      return list().map(numberOrText);
  }
}

function numberOrText(text: string): number | string {
  return text !== '' && Number.isFinite(Number(text)) ? Number(text) : text;
}

/** A cell a spreadsheet would run as a formula starts with one of these (OWASP's list for CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;
/** What `neutralizeCell` adds a leading apostrophe to, besides formulas; `restoreCell` takes it off. */
const ESCAPED = /^'['=+\-@\t\r]/;
/** A number as written in a number column: never a formula, so a leading minus stays bare. */
const PLAIN_NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/**
 * Spreadsheet programs run a cell that starts with `=`, `+`, `-` or `@` as a formula, and some do the
 * same after a tab or carriage return, so node text could run as one when an exported file is opened
 * (CSV injection). Such a cell is written with an apostrophe in front, which spreadsheets show as
 * text: `=HYPERLINK(…)` becomes `'=HYPERLINK(…)`. A plain number (`-0.5`) cannot be a formula and stays
 * as it is. To be lossless, a cell that itself starts with an apostrophe and one of those characters
 * or a second apostrophe gets one more, and reading (`restoreCell`) takes exactly one away: `'=x` is
 * written `''=x` and reads back as `'=x`. Any other cell, `'tis` among them, is written and read as it
 * is. AutoGRAMS (pandas) keeps the apostrophe, so it reads a neutralized cell with it.
 */
export function neutralizeCell(cell: string): string {
  const formula = FORMULA_START.test(cell) && !PLAIN_NUMBER.test(cell);
  return formula || ESCAPED.test(cell) ? `'${cell}` : cell;
}

/** Undoes `neutralizeCell`: an apostrophe before a formula character or another apostrophe is dropped. */
export function restoreCell(cell: string): string {
  return ESCAPED.test(cell) ? cell.slice(1) : cell;
}

function writeCell(value: unknown): string {
  if (value === undefined) return '';
  return Array.isArray(value) ? value.join(',') : String(value);
}

/** Cells of the columns `… A`, `… B`, … in letter order, up to the last one that has a value. */
function lettered(keys: string[], cells: string[], pattern: RegExp): string[] {
  const values: string[] = [];
  keys.forEach((key, i) => {
    const letter = pattern.exec(key)?.[1];
    if (letter) values[LETTERS.indexOf(letter)] = cells[i] ?? '';
  });
  const filled = Array.from(values, (v) => v ?? '');
  while (filled.length > 0 && filled[filled.length - 1] === '') filled.pop();
  return filled;
}

function columnWarnings(keys: string[], headers: string[], valued: Set<number>, source: string): string[] {
  const withValues: string[] = [];
  const empty: string[] = [];
  keys.forEach((key, i) => {
    if (!key || isKnown(key)) return;
    (valued.has(i) ? withValues : empty).push(headers[i]!);
  });
  const warnings: string[] = [];
  if (withValues.length > 0)
    warnings.push(
      `${source}: these columns are not AutoGRAMS columns, so their values were ignored: ${withValues.join(', ')}`,
    );
  if (empty.length > 0)
    warnings.push(`${source}: these empty columns are not AutoGRAMS columns: ${empty.join(', ')}`);
  return warnings;
}

/** How `graphToCsv` writes cells. */
export interface CsvWriteOptions {
  /**
   * Put an apostrophe before cells a spreadsheet would run as formulas (`neutralizeCell`); default true.
   * Without it, a cell that starts with an apostrophe and `=`, `+`, `-`, `@` or `'` reads back one short.
   */
  neutralizeFormulas?: boolean;
}

/**
 * Writes a graph as an AutoGRAMS spreadsheet; warns about what a spreadsheet cannot hold: a config other
 * than the AutoGRAMS defaults a spreadsheet is read back with, the graph's description, and code in
 * JavaScript. A Python code node is written as AutoGRAMS' `python_function`. A JavaScript one keeps our
 * action `code`, which AutoGRAMS refuses rather than run as Python; meta-agent reads a spreadsheet's
 * code back as Python, so the warning names the nodes to port (or to keep in .autogram.json).
 */
export function graphToCsv(
  file: GraphFile,
  options: CsvWriteOptions = {},
): { text: string; warnings: string[] } {
  const cell = options.neutralizeFormulas === false ? (text: string) => text : neutralizeCell;
  const choiceCount = Math.max(0, ...file.nodes.map((n) => n.transitionChoices.length));
  const userCount = Math.max(0, ...file.nodes.map((n) => n.userInstructions.length));
  const columns: { header: string; value: (node: NodeSpec) => string }[] = [
    { header: 'Name', value: (n) => n.name },
    { header: 'Action', value: (n) => actionCell(file, n) },
    { header: 'Instruction', value: (n) => n.instruction },
    { header: 'Transitions', value: (n) => n.transitions.join(',') },
  ];
  const optional = ({ header, field }: Column): void => {
    const value = (n: NodeSpec): string => writeCell(n[field]);
    if (file.nodes.some((n) => value(n) !== '')) columns.push({ header, value });
  };
  const [, questionPrompt, transitionQuestion, ...rest] = COLUMNS;
  optional(questionPrompt!);
  optional(transitionQuestion!);
  for (let i = 0; i < choiceCount; i++)
    columns.push({ header: `Transition Choice ${letter(i)}`, value: (n) => n.transitionChoices[i] ?? '' });
  for (let i = 0; i < userCount; i++)
    columns.push({
      header: `User Instruction Transition ${letter(i)}`,
      value: (n) => n.userInstructions[i] ?? '',
    });
  rest.forEach(optional);

  const text = stringify([
    columns.map((c) => c.header),
    ...file.nodes.map((n) => columns.map((c) => cell(c.value(n)))),
  ]);
  const warnings: string[] = [];
  // The language is told below, where it matters: a graph without code reads back the same in either.
  if (!isDeepStrictEqual({ ...file.config, language: 'python' }, autogramsConfig()) || file.description)
    warnings.push(
      "a CSV file holds nodes only: the graph config (agent name, prompts, start node, models, classifier context) and description are not saved, and a spreadsheet is read back with AutoGRAMS' defaults; use .autogram.json to keep them",
    );
  const javascript = compileGraph(file).nodes.filter(
    (n) => codeLanguage(file.config, n) === 'javascript' && hasCode(n),
  );
  if (javascript.length > 0)
    warnings.push(
      `a CSV file is read back as Python, AutoGRAMS' language, but the code, conditions or call arguments of ${namesOf(javascript)} are JavaScript: they are written as they are; port them to Python, or use .autogram.json to keep them JavaScript`,
    );
  return { text, warnings };
}

/** The Action cell: AutoGRAMS' `python_function` for Python code, our action name for the rest. */
function actionCell(file: GraphFile, node: NodeSpec): string {
  return node.action === 'code' && codeLanguage(file.config, node) === 'python'
    ? 'python_function'
    : node.action;
}

/** `node "a"`, or `nodes "a", "b", "c" and 4 more`. */
function namesOf(nodes: readonly NodeSpec[]): string {
  const SHOWN = 3;
  const names = nodes.slice(0, SHOWN).map((n) => `"${n.name}"`);
  const more = nodes.length > SHOWN ? ` and ${nodes.length - SHOWN} more` : '';
  return `${nodes.length === 1 ? 'node' : 'nodes'} ${names.join(', ')}${more}`;
}

function letter(i: number): string {
  return LETTERS[i]!.toUpperCase();
}
