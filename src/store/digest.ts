/**
 * The digest a store keeps of a value recorded under a unique key, to tell a repeated write from a
 * different one. It is taken over canonical JSON (every object's keys sorted): a value read back and
 * checked by a schema comes out with its keys in the schema's order, not in the order the process that
 * wrote it built them, and must still be the same value.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonical-json.js';

export function digestOf(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}
