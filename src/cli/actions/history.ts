/** What `meta-agent history` does (declared in ../commands/history.ts). */
import type { AiplEntry, AiplState } from '../../aipl/state.js';
import { UserError } from '../../errors.js';
import type { EditRecord, NodeChange } from '../../graph/edit.js';
import {
  graphFormatOf,
  loadGraphFile,
  parseGraphObject,
  parseJsonText,
  readTextFile,
  saveGraphFile,
} from '../../graph/load.js';
import type { NodeSpec } from '../../graph/schema.js';
import { HISTORY_FORMAT, VersionedGraph } from '../../graph/versioned.js';
import { isStateText, replay } from '../../store/conversation-journal.js';
import type { ConversationState } from '../../engine/state.js';
import { exportGraph } from '../../export/formats.js';
import { openStore } from '../store-for.js';
import { writeOut, writeErr } from '../terminal.js';

/** `history`'s options as commander parses them. */
export interface HistoryOptions {
  diff?: string[];
  revert?: string;
  output?: string;
  aipl?: boolean;
  json?: boolean;
  database?: string;
}

/** What a file holds of a conversation's history: a graph's versions, an AIPL log, or both. */
interface Saved {
  graph?: VersionedGraph;
  /** Only a conversation state has one, and only when its graph uses AIPL (config.aipl). */
  aipl?: AiplState;
  /** The file is a conversation state, not a graph file or a bare graph history. */
  isState: boolean;
}

/** A value longer than this is cut in the AIPL table; `--aipl --json` prints it whole. */
const VALUE_COLUMN_LIMIT = 40;

/**
 * Lists the versions of the graph in `path` and the AIPL log of a conversation state, or with --diff
 * or --revert compares or writes versions, or with --aipl prints the AIPL log alone.
 */
export async function runHistory(path: string, options: HistoryOptions): Promise<void> {
  checkOptions(options);
  const saved = (await readStored(path, options.database)) ?? (await readSaved(path));
  if (options.aipl) return printAiplOnly(saved, path, options.json === true);
  if (options.diff) return printDiff(versionsOf(saved, path), options.diff);
  if (options.revert !== undefined)
    return writeVersion(versionsOf(saved, path), options.revert, options.output);
  if (!saved.graph && !saved.aipl)
    throw new UserError(
      `${path}: this conversation state holds no graph history (its graph was not edited) and no AIPL log`,
      2,
      'only self-referential runs save a graph history, and only graphs with config.aipl an AIPL log; run history on the graph file for version 0',
    );
  const sections = [
    ...(saved.graph ? [versionsTable(saved.graph, path)] : []),
    ...(saved.aipl ? [aiplTable(saved.aipl, path)] : []),
  ];
  writeOut(`${sections.join('\n\n')}\n`);
}

/** Refuses combinations that say two things at once, before any file is read. */
function checkOptions(options: HistoryOptions): void {
  if (options.diff && options.revert !== undefined)
    throw new UserError('give --diff or --revert, not both', 2);
  if (options.aipl && (options.diff || options.revert !== undefined))
    throw new UserError('--aipl prints the AIPL log alone; give it without --diff or --revert', 2);
  if (options.json && !options.aipl) throw new UserError('--json is only used with --aipl', 2);
  if (options.output && options.revert === undefined) throw new UserError('-o is only used with --revert', 2);
}

/** A state file's `graph` snapshot and AIPL log, a bare snapshot, or a graph file at version 0. */
/**
 * The conversation saved as `name` in the database, when one is named (--database or the variable) and
 * holds it; undefined otherwise, and `name` is a file's path.
 */
async function readStored(name: string, database: string | undefined): Promise<Saved | undefined> {
  const opened = await openStore(database);
  try {
    if (!opened.inDatabase) return undefined;
    const state = await opened.store.conversations.load(name);
    return state && savedOf(state, `${name} (graph)`);
  } finally {
    await opened.close();
  }
}

function savedOf(state: ConversationState, source: string): Saved {
  return {
    ...(state.graph !== undefined && { graph: VersionedGraph.fromJSON(state.graph, source) }),
    ...(state.aipl && { aipl: state.aipl }),
    isState: true,
  };
}

async function readSaved(path: string): Promise<Saved> {
  if (graphFormatOf(path) === 'csv')
    return { graph: new VersionedGraph((await loadGraphFile(path)).file), isState: false };
  const text = await readTextFile(path);
  if (isStateText(text)) return savedOf(replay(text, path), `${path} (graph)`);
  const json = parseJsonText(text, path);
  if (isRecord(json) && json.format === HISTORY_FORMAT)
    return { graph: VersionedGraph.fromJSON(json, path), isState: false };
  const { file, warnings } = parseGraphObject(json, path);
  for (const warning of warnings) writeErr(`warning: ${warning}\n`);
  return { graph: new VersionedGraph(file), isState: false };
}

/** The graph versions --diff and --revert work on. */
function versionsOf(saved: Saved, path: string): VersionedGraph {
  if (saved.graph) return saved.graph;
  throw new UserError(
    `${path}: this conversation state holds no graph history (its graph was not edited)`,
    2,
    'only self-referential runs save one; run history on the graph file for version 0',
  );
}

function versionsTable(graph: VersionedGraph, path: string): string {
  const rows: string[][] = [
    ['version', 'time', 'by', 'op', 'node'],
    ['0', '-', '-', 'loaded', `(${graph.fileAt(0).nodes.length} nodes)`],
    ...graph.history().map((r) => [String(r.version), r.at, r.by, r.op, describeNode(r)]),
  ];
  const summary = `${graph.name} (${path}): version ${graph.version}, ${graph.nodes().length} nodes`;
  return [summary, ...tableLines(rows)].join('\n');
}

/** The AIPL log, oldest entry first, under a line saying how much of it there is. */
function aiplTable(aipl: AiplState, path: string): string {
  const count = aipl.log.length;
  const entries = count === 0 ? 'no entries yet' : `${count} ${count === 1 ? 'entry' : 'entries'}`;
  const summary = `AIPL log (${path}): ${entries}, turn ${aipl.turn}`;
  if (count === 0) return summary;
  const rows = [['turn', 'name', 'value', 'question'], ...aipl.log.map(aiplRow)];
  return [summary, ...tableLines(rows)].join('\n');
}

function aiplRow(entry: AiplEntry): string[] {
  const value = oneLine(entry.value);
  const cut = value.length > VALUE_COLUMN_LIMIT ? `${value.slice(0, VALUE_COLUMN_LIMIT - 1)}…` : value;
  return [String(entry.turn), entry.name, cut, oneLine(entry.question)];
}

/** A table cell keeps to its row: line breaks show as `⏎`. */
function oneLine(text: string): string {
  return text.replace(/\s*\r?\n\s*/g, ' ⏎ ').trim();
}

function printAiplOnly(saved: Saved, path: string, json: boolean): void {
  if (!saved.aipl)
    throw new UserError(
      saved.isState
        ? `${path}: this conversation state holds no AIPL log`
        : `${path}: is a graph, not a conversation state; only a state holds an AIPL log`,
      2,
      'a conversation saved by `chat --state FILE` on a graph with config.aipl keeps one',
    );
  writeOut(json ? `${JSON.stringify(saved.aipl.log, null, 2)}\n` : `${aiplTable(saved.aipl, path)}\n`);
}

/** Columns padded to their widest cell, the first (a number) aligned right, two spaces between. */
function tableLines(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) =>
    row
      .map((cell, i) => (i === 0 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}

function describeNode(record: EditRecord): string {
  const renamed = record.before && record.after && record.before.name !== record.after.name;
  const name = renamed ? `${record.before!.name} → ${record.after!.name}` : record.name;
  return record.reverts === undefined ? name : `${name} (undoes version ${record.reverts})`;
}

function printDiff(graph: VersionedGraph, versions: string[]): void {
  if (versions.length !== 2) throw new UserError('--diff takes two versions: --diff A B', 2);
  const [a, b] = versions.map((v) => parseVersion(v, graph));
  const changes = graph.diff(a!, b!);
  const lines = [
    `from version ${a} to version ${b}: ${changes.length === 0 ? 'no differences' : ''}`.trimEnd(),
  ];
  for (const change of changes) lines.push(...describeChange(change));
  writeOut(`${lines.join('\n')}\n`);
}

function describeChange(change: NodeChange): string[] {
  if (change.change === 'added') return [`  + ${change.name}  added`];
  if (change.change === 'removed') return [`  - ${change.name}  removed`];
  const lines = [`  ~ ${change.name}  changed: ${change.fields!.join(', ')}`];
  for (const field of change.fields! as (keyof NodeSpec)[])
    lines.push(
      `      ${field}`,
      `        - ${show(change.before![field])}`,
      `        + ${show(change.after![field])}`,
    );
  return lines;
}

function show(value: unknown): string {
  return value === undefined ? '(unset)' : JSON.stringify(value);
}

async function writeVersion(
  graph: VersionedGraph,
  version: string,
  output: string | undefined,
): Promise<void> {
  if (!output) throw new UserError('--revert needs -o FILE: where to write the graph', 2);
  const n = parseVersion(version, graph);
  if (output === '-') {
    writeOut((await exportGraph(graph.fileAt(n), 'json')).text);
    return;
  }
  const warnings = await saveGraphFile(output, graph.fileAt(n));
  for (const warning of warnings) writeErr(`warning: ${warning}\n`);
  writeErr(`wrote ${output}: the graph at version ${n} of ${graph.version}\n`);
}

function parseVersion(text: string, graph: VersionedGraph): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n > graph.version)
    throw new UserError(`no version "${text}"; this graph has versions 0 to ${graph.version}`, 2);
  return n;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
