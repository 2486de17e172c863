/**
 * Edits to a graph (what self-referential code and the designer ask for) and the records of applied
 * edits. A record holds the node before and after, so it can be replayed, inverted and diffed.
 */
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { UserError } from '../errors.js';
import type { Finding } from './lint.js';
import { nodeSpecSchema, type NodeSpec, type NodeSpecInput } from './schema.js';

/** One requested change to a graph. Unknown node fields are refused rather than dropped. */
export type GraphEdit =
  | { op: 'add'; node: NodeSpecInput }
  | { op: 'update'; name: string; patch: Partial<NodeSpecInput> }
  | { op: 'remove'; name: string }
  | { op: 'add-transition'; from: string; to: string; choice?: string };

/** Validates edits that arrive as untyped data (from sandboxed code). Patches are checked when merged. */
export const graphEditSchema = z.discriminatedUnion('op', [
  z.object({ op: z.literal('add'), node: z.record(z.string(), z.unknown()) }),
  z.object({ op: z.literal('update'), name: z.string(), patch: z.record(z.string(), z.unknown()) }),
  z.object({ op: z.literal('remove'), name: z.string() }),
  z.object({
    op: z.literal('add-transition'),
    from: z.string(),
    to: z.string(),
    choice: z.string().optional(),
  }),
]);

export const EDIT_OPS = ['add', 'update', 'remove', 'add-transition', 'revert'] as const;

/** An applied edit: version N+1 of the graph. `index` is the node's position in file order. */
export interface EditRecord {
  version: number;
  /** ISO 8601 time the edit was applied. */
  at: string;
  /** The node whose code made the edit (or a tool name, such as `cli`). */
  by: string;
  op: (typeof EDIT_OPS)[number];
  /** The node edited, by its name before the edit (after, for an added node). */
  name: string;
  before: NodeSpec | null;
  after: NodeSpec | null;
  index: number;
  /** For `revert`: the version whose edit this one undoes. */
  reverts?: number;
}

export const editRecordSchema = z.object({
  version: z.number().int().positive(),
  at: z.string(),
  by: z.string(),
  op: z.enum(EDIT_OPS),
  name: z.string(),
  before: nodeSpecSchema.nullable(),
  after: nodeSpecSchema.nullable(),
  index: z.number().int().nonnegative(),
  reverts: z.number().int().positive().optional(),
});

/** A refused edit. The graph is unchanged; `findings` holds the lint errors the edit would have caused. */
export class GraphEditError extends UserError {
  constructor(
    message: string,
    hint?: string,
    readonly findings: readonly Finding[] = [],
  ) {
    super(message, 1, hint);
  }
}

/** Applies a record's change to a node list (a copy is returned). Throws when the list does not match. */
export function replayRecord(
  nodes: readonly NodeSpec[],
  record: Pick<EditRecord, 'before' | 'after' | 'index'>,
): NodeSpec[] {
  const next = [...nodes];
  const { before, after, index } = record;
  if (before && next[index]?.name !== before.name)
    throw new UserError(
      `graph history is inconsistent: expected node "${before.name}" at position ${index}`,
      1,
    );
  if (before && after) next[index] = after;
  else if (before) next.splice(index, 1);
  else if (after) next.splice(Math.min(index, next.length), 0, after);
  return next;
}

/** A node as stored: optional fields that are unset are absent, not `undefined`. */
export function cleanNode(node: NodeSpec): NodeSpec {
  return Object.fromEntries(Object.entries(node).filter(([, v]) => v !== undefined)) as NodeSpec;
}

/** How one node differs between two versions. */
export interface NodeChange {
  name: string;
  change: 'added' | 'removed' | 'changed';
  /** For `changed`: the fields that differ. */
  fields?: string[];
  before?: NodeSpec;
  after?: NodeSpec;
}

/** Node-level differences from `a` to `b`, matched by name: changed and removed in a's order, then added. */
export function diffNodes(a: readonly NodeSpec[], b: readonly NodeSpec[]): NodeChange[] {
  const inB = new Map(b.map((n) => [n.name, n]));
  const inA = new Set(a.map((n) => n.name));
  const changes: NodeChange[] = [];
  for (const before of a) {
    const after = inB.get(before.name);
    if (!after) changes.push({ name: before.name, change: 'removed', before });
    else {
      const fields = changedFields(before, after);
      if (fields.length > 0) changes.push({ name: before.name, change: 'changed', fields, before, after });
    }
  }
  for (const after of b) if (!inA.has(after.name)) changes.push({ name: after.name, change: 'added', after });
  return changes;
}

function changedFields(before: NodeSpec, after: NodeSpec): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]) as Set<keyof NodeSpec>;
  return [...keys].filter((key) => !isDeepStrictEqual(before[key], after[key]));
}
