/** What `meta-agent history` does (declared in ../commands/history.ts). */
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
import type { HistoryOptions } from '../commands/history.js';
import { isStateText, replay } from '../state-file.js';
import { exportGraph } from '../../export/formats.js';
import { writeOut, writeErr } from '../terminal.js';

/** Lists the versions of the graph in `path`, or with --diff or --revert compares or writes them. */
export async function runHistory(path: string, options: HistoryOptions): Promise<void> {
  if (options.diff && options.revert !== undefined)
    throw new UserError('give --diff or --revert, not both', 2);
  const graph = await readVersioned(path);
  if (options.diff) return printDiff(graph, options.diff);
  if (options.revert !== undefined) return writeVersion(graph, options.revert, options.output);
  if (options.output) throw new UserError('-o is only used with --revert', 2);
  printHistory(graph, path);
}

/** A state file's `graph` snapshot, a bare snapshot, or a graph file at version 0. */
async function readVersioned(path: string): Promise<VersionedGraph> {
  if (graphFormatOf(path) === 'csv') return new VersionedGraph((await loadGraphFile(path)).file);
  const text = await readTextFile(path);
  if (isStateText(text)) {
    const state = replay(text, path);
    if (state.graph !== undefined) return VersionedGraph.fromJSON(state.graph, `${path} (graph)`);
    throw new UserError(
      `${path}: this conversation state holds no graph history (its graph was not edited)`,
      2,
      'only self-referential runs save one; run history on the graph file for version 0',
    );
  }
  const json = parseJsonText(text, path);
  if (isRecord(json) && json.format === HISTORY_FORMAT) return VersionedGraph.fromJSON(json, path);
  const { file, warnings } = parseGraphObject(json, path);
  for (const warning of warnings) writeErr(`warning: ${warning}\n`);
  return new VersionedGraph(file);
}

function printHistory(graph: VersionedGraph, path: string): void {
  const rows: string[][] = [
    ['version', 'time', 'by', 'op', 'node'],
    ['0', '-', '-', 'loaded', `(${graph.fileAt(0).nodes.length} nodes)`],
    ...graph.history().map((r) => [String(r.version), r.at, r.by, r.op, describeNode(r)]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const lines = rows.map((row) =>
    row
      .map((cell, i) => (i === 0 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
  const summary = `${graph.name} (${path}): version ${graph.version}, ${graph.nodes().length} nodes`;
  writeOut(`${summary}\n${lines.join('\n')}\n`);
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
