/**
 * AutoGRAMS 0.1 spreadsheets (CSV): one row per node, one column per node field. Headers are matched
 * case-insensitively with spaces or underscores; columns this project does not run are reported once,
 * never dropped without a word.
 */
import { isDeepStrictEqual } from 'node:util';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { UserError } from '../errors.js';
import { splitTopLevel } from './parse.js';
import { summarizeIssues } from './schema-issues.js';
import {
  GRAPH_FORMAT,
  graphConfigSchema,
  nodeSpecSchema,
  type GraphFile,
  type NodeSpec,
  type NodeSpecInput,
} from './schema.js';

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/** Scalar text fields, by normalized header, with the AutoGRAMS header written on export. */
const TEXT_COLUMNS = [
  ['instruction', 'instruction', 'Instruction'],
  ['transition_question', 'transitionQuestion', 'Transition Question'],
  ['boolean_condition', 'booleanCondition', 'Boolean Condition'],
  ['condition_interjection', 'conditionInterjection', 'Condition Interjection'],
  ['state_category', 'category', 'State Category'],
  ['notes', 'notes', 'Notes'],
  ['reply_start', 'replyStart', 'Reply Start'],
  ['instruction_template', 'instructionTemplate', 'Instruction Template'],
] as const;

/** AutoGRAMS columns whose features meta-agent does not implement. */
const UNSUPPORTED_COLUMNS = new Set([
  'instruction_short',
  'question_prompt',
  'transition_probs',
  'user_interjection',
  'probability_interjection',
  'example_interjection',
  'prerequisite_states',
  'blocking_states',
  'up_weight_states',
  'down_weight_states',
  'required_revisit',
  'conv_scope',
  'conv_context',
  'lineno',
  'def_type',
]);

const CHOICE = /^transition_choice_([a-z])$/;
const USER_INSTRUCTION = /^user_instruction_transition_([a-z])$/;

/** `Transition Choice A`, `transition_choice_a` and `TRANSITION  CHOICE-A` all become `transition_choice_a`. */
export function normalizeHeader(header: string): string {
  return header
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, '_');
}

function isSupported(key: string): boolean {
  return (
    ['name', 'action', 'transitions', 'transition_context'].includes(key) ||
    TEXT_COLUMNS.some(([column]) => column === key) ||
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
  if (!header) throw new UserError(`${options.source}: the file is empty`, 1);
  const keys = header.cells.map(normalizeHeader);
  checkColumns(keys, header.cells, options.source);

  const nodes: NodeSpec[] = [];
  const valued = new Set<number>();
  for (const row of rows) {
    if (row.cells.every((cell) => cell.trim() === '')) continue;
    const cell = (key: string): string => row.cells[keys.indexOf(key)] ?? '';
    row.cells.forEach((value, i) => {
      if (value.trim() !== '') valued.add(i);
    });
    const name = cell('name').trim();
    const where = `${options.source} line ${row.line}${name ? ` (node ${name})` : ''}`;
    if (!name) throw new UserError(`${where}: the row has no Name`, 1);
    const input = nodeFromRow(name, keys, row.cells);
    const parsed = nodeSpecSchema.safeParse(input);
    if (!parsed.success) throw new UserError(`${where}: ${summarizeIssues(parsed.error, input)}`, 1);
    nodes.push(parsed.data);
  }
  if (nodes.length === 0) throw new UserError(`${options.source}: the spreadsheet has no node rows`, 1);

  const file: GraphFile = {
    format: GRAPH_FORMAT,
    name: options.name,
    description: '',
    config: graphConfigSchema.parse({}),
    nodes,
  };
  return { file, warnings: columnWarnings(keys, header.cells, valued, options.source) };
}

interface Row {
  line: number;
  cells: string[];
}

function readRows(text: string, source: string): Row[] {
  try {
    const records = parse(text, { bom: true, relax_column_count: true, info: true }) as unknown as {
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
    throw new UserError(
      `${source}${line ? ` line ${line}` : ''}: not a readable CSV file: ${(error as Error).message}`,
      2,
    );
  }
}

function checkColumns(keys: string[], headers: string[], source: string): void {
  for (const [key, header] of [
    ['name', 'Name'],
    ['action', 'Action'],
  ] as const)
    if (!keys.includes(key))
      throw new UserError(
        `${source}: no "${header}" column`,
        1,
        'an AutoGRAMS spreadsheet has a header row with at least the columns Name, Action and Instruction',
      );
  keys.forEach((key, i) => {
    const first = keys.indexOf(key);
    if (key && first !== i)
      throw new UserError(`${source}: columns "${headers[first]}" and "${headers[i]}" are the same field`, 1);
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
  for (const [column, field] of TEXT_COLUMNS) if (at(column) !== '') node[field] = at(column);
  const context = at('transition_context').trim();
  if (context !== '') node.transitionContext = /^\d+$/.test(context) ? Number(context) : context;
  return node as NodeSpecInput;
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
    if (!key || isSupported(key)) return;
    const label = UNSUPPORTED_COLUMNS.has(key) ? headers[i]! : `${headers[i]!} (not an AutoGRAMS column)`;
    (valued.has(i) ? withValues : empty).push(label);
  });
  const warnings: string[] = [];
  if (withValues.length > 0)
    warnings.push(
      `${source}: the values in these columns are not supported and were ignored: ${withValues.join(', ')}`,
    );
  if (empty.length > 0)
    warnings.push(`${source}: empty columns that meta-agent does not support: ${empty.join(', ')}`);
  return warnings;
}

/** Writes a graph as an AutoGRAMS spreadsheet; warns about what a spreadsheet cannot hold. */
export function graphToCsv(file: GraphFile): { text: string; warnings: string[] } {
  const choiceCount = Math.max(0, ...file.nodes.map((n) => n.transitionChoices.length));
  const userCount = Math.max(0, ...file.nodes.map((n) => n.userInstructions.length));
  const columns: { header: string; value: (node: NodeSpec) => string }[] = [
    { header: 'Name', value: (n) => n.name },
    { header: 'Action', value: (n) => n.action },
    { header: 'Instruction', value: (n) => n.instruction },
    { header: 'Transitions', value: (n) => n.transitions.join(',') },
  ];
  const optional = (header: string, value: (node: NodeSpec) => string): void => {
    if (file.nodes.some((n) => value(n) !== '')) columns.push({ header, value });
  };
  for (const [, field, header] of TEXT_COLUMNS.slice(1, 2)) optional(header, (n) => n[field] ?? '');
  for (let i = 0; i < choiceCount; i++)
    columns.push({ header: `Transition Choice ${letter(i)}`, value: (n) => n.transitionChoices[i] ?? '' });
  for (let i = 0; i < userCount; i++)
    columns.push({
      header: `User Instruction Transition ${letter(i)}`,
      value: (n) => n.userInstructions[i] ?? '',
    });
  for (const [, field, header] of TEXT_COLUMNS.slice(2)) optional(header, (n) => n[field] ?? '');
  optional('Transition Context', (n) =>
    n.transitionContext === undefined ? '' : String(n.transitionContext),
  );

  const text = stringify([
    columns.map((c) => c.header),
    ...file.nodes.map((n) => columns.map((c) => c.value(n))),
  ]);
  const warnings: string[] = [];
  const defaults = graphConfigSchema.parse({});
  if (!isDeepStrictEqual(file.config, defaults) || file.description)
    warnings.push(
      'a CSV file holds nodes only: the graph config (agent name, prompts, start node, models) and description are not saved; use .autogram.json to keep them',
    );
  return { text, warnings };
}

function letter(i: number): string {
  return LETTERS[i]!.toUpperCase();
}
