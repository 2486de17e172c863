/**
 * How `meta-agent memory` shows memories, search hits and a namespace's stats to a person (--json
 * prints the store's own values instead). Pure: the caller writes the lines.
 */
import type { DatabaseMemoryStats } from '../../memory/memory.js';
import type { MemoryHit, MemoryItem, MemoryStats } from '../../memory/store.js';
import { plural } from './words.js';

/** Lines of a hit's text shown before the rest is left to --json. */
const HIT_LINES = 6;

/** `id  date  first line`, cut to `width` characters when given (a terminal's). */
export function listLine(item: MemoryItem, width?: number): string {
  return fit(`${item.id}  ${shortDate(item.at)}  ${firstLine(item.text)}`, width);
}

/** A hit: a heading with its id, score, what found it and date, then its text indented. */
export function hitLines(hit: MemoryHit, width?: number): string[] {
  const via = hit.via
    .map((side) => (side === 'meaning' && hit.similarity !== undefined ? `meaning ${hit.similarity}` : side))
    .join(', ');
  const heading = `${hit.id}  score ${hit.score.toFixed(2)}  (${via})  ${shortDate(hit.at)}`;
  const lines = hit.text.split(/\r?\n/);
  const shown = lines.slice(0, HIT_LINES).map((line) => fit(`  ${line}`, width));
  if (lines.length > HIT_LINES)
    shown.push(`  … ${plural(lines.length - HIT_LINES, 'more line')} (--json shows all)`);
  const meta = Object.entries(hit.meta).map(([key, value]) => `${key}=${value}`);
  return [heading, ...shown, ...(meta.length > 0 ? [fit(`  [${meta.join(' ')}]`, width)] : [])];
}

/** What `stats` shows besides the store's numbers. */
export interface StatsContext {
  namespace: string;
  /** Every namespace of the workspace (or the database). */
  namespaces: string[];
  /** The embedding model of now, or why there is none. */
  embedder: { model: string } | { missing: string };
}

/** The rows that say where a namespace is kept, and what its files take there. */
function storageRows(stats: MemoryStats | DatabaseMemoryStats): {
  where: [string, string];
  sizes: Array<[string, string]>;
} {
  if ('database' in stats) return { where: ['database', stats.database], sizes: [] };
  return {
    where: ['folder', stats.folder],
    sizes: [
      ['forgotten', `${stats.forgottenPending} awaiting compaction`],
      [
        'log',
        `${formatBytes(stats.logBytes)}, ${plural(stats.records, 'record')} (${stats.snapshotRecords} in the saved index)`,
      ],
      ['index', formatBytes(stats.indexBytes)],
    ],
  };
}

export function statsLines(stats: MemoryStats | DatabaseMemoryStats, context: StatsContext): string[] {
  const { where, sizes } = storageRows(stats);
  const rows: Array<[string, string]> = [
    ['namespace', context.namespace],
    where,
    ['memories', `${stats.items} (${stats.embedded} embedded)`],
    [
      'vectors',
      stats.model === undefined
        ? 'none yet'
        : `${stats.model}, ${plural(stats.dimensions ?? 0, 'dimension')}`,
    ],
    ['embedder', 'model' in context.embedder ? context.embedder.model : `none: ${context.embedder.missing}`],
    ['search', stats.wordsOnly === undefined ? 'by meaning and words' : `by words only: ${stats.wordsOnly}`],
    ...sizes,
    ['namespaces', context.namespaces.length === 0 ? '(none yet)' : context.namespaces.join(', ')],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`);
}

/** `2024-05-01 14:03`, local time: enough to tell memories apart at a glance. */
export function shortDate(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const two = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${two(date.getHours())}:${two(date.getMinutes())}`;
}

export function formatBytes(bytes: number): string {
  for (const [unit, size] of [
    ['MiB', 2 ** 20],
    ['KiB', 2 ** 10],
  ] as const) {
    if (bytes >= size) return `${(bytes / size).toFixed(1)} ${unit}`;
  }
  return plural(bytes, 'byte');
}

/** The text's first line, with `…` when more follows. */
function firstLine(text: string): string {
  const [first = '', ...rest] = text.trim().split(/\r?\n/);
  return rest.length > 0 ? `${first} …` : first;
}

/** `line` cut to `width` characters (code points), ending in `…` when cut. */
function fit(line: string, width: number | undefined): string {
  if (width === undefined) return line;
  const chars = [...line];
  return chars.length <= width ? line : `${chars.slice(0, Math.max(width - 1, 0)).join('')}…`;
}
