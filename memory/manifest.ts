/**
 * The manifest beside a namespace's files, `manifest.json`: the index's space, dimensions and embedding
 * model, and the snapshot of the log the index files hold. It is checked before an index file is
 * loaded: hnswlib reads a file of another dimension without complaint and answers NaN, and a file it
 * was not given by us (a shared folder) must match the size and digest recorded here first. A manifest
 * that is not one is damage; none yet is a new namespace's.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { replaceFile } from '../src/write-file.js';
import { MemoryDamaged, readRegular, UnusableFile } from './files.js';
import { DEFAULT_SHAPE } from './vector-index.js';

export const MANIFEST_FILE = 'manifest.json';

/** The largest manifest read: it is a few lines. */
const MAX_MANIFEST_BYTES = 1 << 20;

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

export type Snapshot = z.infer<typeof snapshotSchema>;

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

/** The manifest in `folder`, or a new namespace's when there is none. Throws MemoryDamaged for any other. */
export async function readManifest(folder: string): Promise<Manifest> {
  const path = join(folder, MANIFEST_FILE);
  let bytes: Buffer | undefined;
  try {
    bytes = await readRegular(path, MAX_MANIFEST_BYTES);
  } catch (error) {
    if (error instanceof UnusableFile) throw new MemoryDamaged(`${path} cannot be read: ${error.message}`);
    throw error;
  }
  if (bytes === undefined) return { format: MANIFEST_FORMAT, space: 'cosine', ...DEFAULT_SHAPE };
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new MemoryDamaged(`${path} is not JSON`);
  }
  const parsed = manifestSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
    throw new MemoryDamaged(`${path} is not a memory manifest (${where}${issue.message})`);
  }
  return parsed.data;
}

/** Replaces the manifest in `folder` at once, flushed: a reader finds the old one or this one. */
export async function writeManifest(folder: string, manifest: Manifest): Promise<void> {
  await replaceFile(join(folder, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`, { durable: true });
}
