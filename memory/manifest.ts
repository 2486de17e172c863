/**
 * The manifest beside a namespace's files, `manifest.json`: the index's space, dimensions and embedding
 * model, and the snapshot of the log the index files hold. It is checked before an index file is
 * loaded: hnswlib reads a file of another dimension without complaint and answers NaN, and a file it
 * was not given by us (a shared folder) must match the size and digest recorded here first.
 */
import { z } from 'zod';

export const MANIFEST_FORMAT = 'meta-agent/memory@1';

/**
 * A snapshot file: a name as the store makes them (so never `..`, a path, or another file of the
 * folder), its size and its digest.
 */
const fileSchema = (name: RegExp, what: string) =>
  z.strictObject({
    file: z.string().regex(name, what),
    bytes: z.number().int().nonnegative(),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
  });

/** The name of a snapshot's vectors file; the store removes those of older snapshots by it. */
export const VECTORS_FILE = /^vectors-[0-9a-f]{1,64}\.hnsw$/;
/** The name of a snapshot's words file, as VECTORS_FILE. */
export const WORDS_FILE = /^words-[0-9a-f]{1,64}\.json$/;

const vectorsSchema = fileSchema(VECTORS_FILE, 'a vectors-HEX.hnsw file of the same folder');
const wordsSchema = fileSchema(WORDS_FILE, 'a words-HEX.json file of the same folder');

export type SnapshotFile = z.infer<typeof wordsSchema>;

const snapshotSchema = z.strictObject({
  /** The log this snapshot was taken of (its header's id): a rewritten log makes it stale. */
  logId: z.string().min(1),
  /** How many records (after the header) and bytes of that log it holds. */
  records: z.number().int().nonnegative(),
  logBytes: z.number().int().nonnegative(),
  /** The hnswlib index; absent while nothing has a vector. */
  vectors: vectorsSchema.optional(),
  /** The lexical index (MiniSearch's JSON). */
  words: wordsSchema,
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
