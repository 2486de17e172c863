/**
 * The manifest beside a namespace's files, `manifest.json`: the index's space, dimensions and embedding
 * model, and the snapshot of the log the index files hold. It is checked before an index file is
 * loaded: hnswlib reads a file of another dimension without complaint and answers NaN, and a file it
 * was not given by us (a shared folder) must match the size and digest recorded here first.
 */
import { z } from 'zod';

export const MANIFEST_FORMAT = 'meta-agent/memory@1';

const fileSchema = z.strictObject({
  file: z.string().regex(/^[\w.-]+$/, 'a file name in the same folder'),
  bytes: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});

export type SnapshotFile = z.infer<typeof fileSchema>;

const snapshotSchema = z.strictObject({
  /** The log this snapshot was taken of (its header's id): a rewritten log makes it stale. */
  logId: z.string().min(1),
  /** How many records (after the header) and bytes of that log it holds. */
  records: z.number().int().nonnegative(),
  logBytes: z.number().int().nonnegative(),
  /** The hnswlib index; absent while nothing has a vector. */
  vectors: fileSchema.optional(),
  /** The lexical index (MiniSearch's JSON). */
  words: fileSchema,
});

export const manifestSchema = z.strictObject({
  format: z.literal(MANIFEST_FORMAT),
  space: z.literal('cosine'),
  /** Set by the first vector: every later one must have as many. */
  dimensions: z.number().int().positive().max(65_536).optional(),
  /** The embedding model of every vector in the namespace. */
  model: z.string().min(1).optional(),
  m: z.number().int().min(2).max(128),
  efConstruction: z.number().int().min(8).max(2048),
  snapshot: snapshotSchema.optional(),
});

export type Manifest = z.infer<typeof manifestSchema>;
