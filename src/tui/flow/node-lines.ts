/**
 * The flow view's words for a node and how many lines the node list takes: pure, so that the layout
 * can fit the list into the terminal and the tests can read the words without drawing.
 */
import { formatCount } from '../format.js';
import { oneLine, tailLines } from '../text.js';
import type { Role } from '../theme.js';
import type { FlowNodeView, ShownNodeStatus } from './view-state.js';

/** Lines of a running node's answer shown under it. */
export const LIVE_LINES = 2;

/** Each status's marker; `running` draws a spinner instead of its marker while the pass goes on. */
export const FLOW_MARKS: Readonly<Record<ShownNodeStatus, string>> = {
  pending: '·',
  running: '▸',
  retry: '↻',
  done: '✓',
  failed: '✗',
  reused: '↺',
  blocked: '⊘',
};

/** The marker for a node the pass stopped under: it is asked again when the pass goes on. */
export const STOPPED_MARK = '■';

/** The colour role of each status's marker. */
export const FLOW_ROLES: Readonly<Record<ShownNodeStatus, Role>> = {
  pending: 'muted',
  running: 'current',
  retry: 'warn',
  done: 'ok',
  failed: 'error',
  reused: 'visited',
  blocked: 'warn',
};

/** `tokens` -> `120 tokens`, `1 token`. */
export function tokensText(tokens: number): string {
  return `${formatCount(tokens)} token${tokens === 1 ? '' : 's'}`;
}

/**
 * What a node's line says after its name: `done · 120 tokens`, `retry (attempt 2/3): why`,
 * `reused (saved 340 tokens)`, `skipped: upstream failed (outline)`. `attempts` is the flow's limit,
 * when known; `stopped` says the pass stopped while the node was asked.
 */
export function statusText(node: FlowNodeView, attempts?: number, stopped = false): string {
  const parts: string[] = [];
  const detail = node.detail ? oneLine(node.detail, 400) : undefined;
  const tokens = node.tokens !== undefined && node.tokens > 0 ? tokensText(node.tokens) : undefined;
  switch (node.status) {
    case 'pending':
      parts.push(node.earlier ? 'settled before the resume' : 'pending');
      break;
    case 'running':
      parts.push(stopped ? 'stopped: asked again when the pass goes on' : 'running');
      break;
    case 'retry': {
      const attempt =
        node.attempt !== undefined
          ? ` (attempt ${node.attempt}${attempts !== undefined ? `/${attempts}` : ''})`
          : '';
      parts.push(
        stopped
          ? 'stopped: asked again when the pass goes on'
          : `retry${attempt}${detail ? `: ${detail}` : ''}`,
      );
      break;
    }
    case 'done':
      parts.push('done');
      if (tokens) parts.push(tokens);
      if (node.model) parts.push(node.model);
      if (node.attempt !== undefined && node.attempt > 1) parts.push(`${node.attempt} answers`);
      if (detail) parts.push(detail);
      break;
    case 'failed':
      parts.push(`failed${detail ? `: ${detail}` : ''}`);
      if (tokens) parts.push(tokens);
      break;
    case 'reused':
      parts.push(`reused (saved ${tokensText(node.tokens ?? 0)})`);
      break;
    case 'blocked':
      parts.push(detail ?? 'skipped: upstream failed');
      break;
  }
  if (node.wrote.length > 0) parts.push(`wrote ${node.wrote.join(', ')}`);
  parts.push(...node.notes);
  if (node.earlier && node.status !== 'pending') parts.push('before the resume');
  return parts.join(' · ');
}

/** A node asks the model now: its answer streams in under its line. */
export function isAsking(node: FlowNodeView): boolean {
  return node.status === 'running' || node.status === 'retry';
}

/** One row of the node list: a node (with its live lines) or several quiet nodes folded into one line. */
export type NodeRow =
  | { kind: 'node'; node: FlowNodeView; live: string[] }
  | { kind: 'fold'; status: ShownNodeStatus; names: string[] }
  | { kind: 'more'; count: number };

/**
 * The node list in at most `height` lines of `width` columns: each node on its line, the last lines
 * of a running node's answer under it. When that is too tall, running nodes keep one answer line, then
 * runs of done, reused or pending nodes fold into one line each, then the list is cut with a count.
 */
export function nodeRows(nodes: readonly FlowNodeView[], width: number, height: number): NodeRow[] {
  const liveWidth = Math.max(width - 8, 10);
  const withLive = (lines: number): NodeRow[] =>
    nodes.map((node) => ({
      kind: 'node',
      node,
      live: isAsking(node) && node.live.trim() ? tailLines(node.live, liveWidth, lines).lines : [],
    }));
  const room = Math.max(height, 2);
  for (const rows of [withLive(LIVE_LINES), withLive(1)]) if (linesOf(rows) <= room) return rows;
  const folded = fold(withLive(1));
  if (linesOf(folded) <= room) return folded;
  const kept: NodeRow[] = [];
  let used = 0;
  for (const row of folded) {
    const lines = rowLines(row);
    if (used + lines > room - 1) break;
    kept.push(row);
    used += lines;
  }
  const hidden = folded
    .slice(kept.length)
    .reduce((n, row) => n + (row.kind === 'fold' ? row.names.length : row.kind === 'node' ? 1 : 0), 0);
  return [...kept, { kind: 'more', count: hidden }];
}

const QUIET: ReadonlySet<ShownNodeStatus> = new Set(['done', 'reused', 'pending']);

/** Runs of two or more quiet nodes of one status folded into one row each. */
function fold(rows: readonly NodeRow[]): NodeRow[] {
  const out: NodeRow[] = [];
  for (const row of rows) {
    const last = out.at(-1);
    if (row.kind !== 'node' || !QUIET.has(row.node.status)) {
      out.push(row);
      continue;
    }
    if (last?.kind === 'fold' && last.status === row.node.status) last.names.push(row.node.name);
    else if (last?.kind === 'node' && last.node.status === row.node.status && QUIET.has(last.node.status))
      out[out.length - 1] = { kind: 'fold', status: row.node.status, names: [last.node.name, row.node.name] };
    else out.push(row);
  }
  return out;
}

function rowLines(row: NodeRow): number {
  return row.kind === 'node' ? 1 + row.live.length : 1;
}

function linesOf(rows: readonly NodeRow[]): number {
  return rows.reduce((n, row) => n + rowLines(row), 0);
}

/** `6 done: a, b, c` for a folded row. */
export function foldText(status: ShownNodeStatus, names: readonly string[]): string {
  return `${names.length} ${status}: ${names.join(', ')}`;
}
