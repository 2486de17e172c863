/**
 * The digest a store keeps of a value recorded under a unique key, to tell a repeated write from a
 * different one. It is taken over the value's JSON with every object's keys sorted: a value read back
 * and checked by a schema comes out with its keys in the schema's order, not in the order the process
 * that wrote it built them, and must still be the same value.
 */
import { createHash } from 'node:crypto';

export function digestOf(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value, sortedKeys)).digest('hex');
}

function sortedKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) sorted[key] = (value as Record<string, unknown>)[key];
  return sorted;
}
