/**
 * The edit history as the History view needs it. Each applied edit is a version holding one node
 * before and after, so its diff is read off the pair: no before means added, no after means removed.
 */
import type { EditRecord } from '../graph/edit.js';
import type { NodeSpec } from '../graph/schema.js';
import { oneLine } from './text.js';

/** One applied edit, as `VersionedGraph.history()` returns it. */
export type VersionRecord = EditRecord;

/** Anything that lists its applied edits, oldest first (a `VersionedGraph` does). */
export interface EditHistory {
  history(): readonly VersionRecord[];
}

/** A field whose value differs between before and after, each shown on one short line. */
export interface FieldChange {
  field: string;
  before: string;
  after: string;
}

/** What one version did to its node. */
export type VersionDiff =
  | { kind: 'added'; name: string }
  | { kind: 'removed'; name: string }
  | { kind: 'changed'; name: string; fields: FieldChange[] };

const VALUE_WIDTH = 60;

/** The diff of one version: which node it added, removed or changed, and the changed fields. */
export function diffRecord(record: VersionRecord): VersionDiff {
  const { before, after } = record;
  if (!before) return { kind: 'added', name: after?.name ?? record.name };
  if (!after) return { kind: 'removed', name: before.name };
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])]
    .filter((field) => raw(field, before) !== raw(field, after))
    .map((field) => ({ field, before: show(field, before), after: show(field, after) }));
  return { kind: 'changed', name: record.name, fields };
}

/** A field's full value as text; empty strings and lists count as absent, as the schema defaults them. */
function raw(field: string, node: NodeSpec): string | undefined {
  const value: unknown = (node as Record<string, unknown>)[field];
  if (value === undefined || value === '' || (Array.isArray(value) && value.length === 0)) return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function show(field: string, node: NodeSpec): string {
  const value = raw(field, node);
  return value === undefined ? '—' : oneLine(value, VALUE_WIDTH);
}
