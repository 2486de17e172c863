/**
 * A namespace's snapshot: the words and vectors index files holding the log's first N records, named
 * by the manifest with their sizes and digests (the vectors file by the log's header too: it holds
 * those records' only copy of their vectors, records.ts). Opening them (once: a writer that replaces
 * them then cannot take them away), checking them against the manifest and loading them; writing new
 * ones under new names; removing those neither the manifest nor the log names.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, stat, unlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { indexShape, labelRecords, type Contents } from './contents.js';
import {
  flush,
  openFilePath,
  openRegular,
  readAll,
  UnusableFile,
  writeDurable,
  type OpenFile,
} from './files.js';
import { TEMP_LOG_FILE, type LogPosition } from './log-file.js';
import { VECTORS_FILE, WORDS_FILE, type Manifest, type Snapshot, type SnapshotFile } from './manifest.js';
import type { LogRecord } from './records.js';
import { IndexFileRejected, VectorIndex } from './vector-index.js';
import { WordIndex } from './word-index.js';

/** The largest snapshot file read: it holds what the log does, read whole (log-file.ts). */
const MAX_SNAPSHOT_BYTES = 2 ** 32;

/** What a vectors file is read and checked in: the file is never held whole (hnswlib holds its own copy). */
const READ_CHUNK_BYTES = 4 * 2 ** 20;

/**
 * A snapshot's files, open: what a writer does to the folder meanwhile cannot change them. Without a
 * words file (the vectors a log names), the words index is made from the memories' texts.
 */
export interface OpenSnapshot {
  words: OpenFile | undefined;
  vectors: OpenFile | undefined;
}

/** What the files of an OpenSnapshot must be, as the manifest or the log's header describes them. */
export interface SnapshotFiles {
  words?: SnapshotFile;
  vectors?: SnapshotFile;
}

/** A file the manifest names is not there: a writer replaced the snapshot after the manifest was read. */
export class SnapshotGone extends IndexFileRejected {}

/**
 * The snapshot's files, open (undefined: the manifest names none), or why they cannot be used: the
 * store rebuilds from the log then, when the snapshot is of this log at all.
 */
export async function openSnapshot(
  folder: string,
  snapshot: SnapshotFiles | undefined,
): Promise<OpenSnapshot | IndexFileRejected | undefined> {
  if (!snapshot) return undefined;
  let words: OpenFile | undefined;
  try {
    words = snapshot.words && (await openSnapshotFile(folder, snapshot.words));
    const vectors = snapshot.vectors && (await openSnapshotFile(folder, snapshot.vectors));
    return { words, vectors };
  } catch (error) {
    await words?.handle.close();
    if (error instanceof IndexFileRejected) return error;
    throw error;
  }
}

export async function closeSnapshot(opened: OpenSnapshot | IndexFileRejected | undefined): Promise<void> {
  if (opened instanceof IndexFileRejected) return;
  await opened?.words?.handle.close();
  await opened?.vectors?.handle.close();
}

/** A snapshot's contents, their vectors index perhaps still to load. */
export interface LoadedSnapshot {
  contents: Contents;
  /**
   * Loads the vectors index into `contents` (checks, then hnswlib), when it was left for later
   * (`deferVectors`); throws IndexFileRejected, SnapshotGone when the file was replaced meanwhile.
   */
  loadVectors: (() => Promise<void>) | undefined;
}

/**
 * The contents of the `held` records (the log's first, as many as the snapshot holds), with the
 * indexes from the snapshot's files (`opened`, described by `snapshot`). Throws IndexFileRejected when
 * they are not what `snapshot` says. With `deferVectors`, the vectors file is left for `loadVectors`:
 * it opens the file again then, and takes it only if its size and digest are still the snapshot's.
 */
export async function loadSnapshot(
  folder: string,
  manifest: Manifest,
  held: readonly LogRecord[],
  opened: OpenSnapshot | IndexFileRejected,
  snapshot: SnapshotFiles,
  deferVectors = false,
): Promise<LoadedSnapshot> {
  if (opened instanceof IndexFileRejected) throw opened;
  // Labels, items and forgotten memories as the records make them; the indexes come from the files.
  const { contents, vectorLabels } = labelRecords(held, manifest);
  if (snapshot.words && opened.words) {
    const words = await verified(opened.words, snapshot.words);
    try {
      contents.words = WordIndex.load(words.toString('utf8'));
    } catch {
      throw new IndexFileRejected('the words index is not MiniSearch JSON');
    }
    if (contents.words.size !== contents.items.size)
      throw new IndexFileRejected('the words index does not hold the memories its snapshot says');
  } else for (const item of contents.items.values()) contents.words.add(item.id, item.text);
  if (vectorLabels.length === 0) return { contents, loadVectors: undefined };
  const { vectors } = snapshot;
  const { dimensions } = manifest;
  if (!vectors || !opened.vectors || dimensions === undefined)
    throw new IndexFileRejected('the vectors index is missing');
  const load = async (file: OpenFile) => {
    // Forgotten as of now: memories forgotten after the snapshot, too, are marked deleted as it loads.
    const forgottenWithVectors = vectorLabels.filter((label) => contents.forgotten.has(label));
    contents.vectors = await VectorIndex.load(
      // hnswlib opens a path: this one is the file just checked, whatever the folder holds now.
      openFilePath(file, join(folder, vectors.file)),
      verifiedChunks(file, vectors),
      { dimensions, ...indexShape(manifest) },
      vectorLabels,
      forgottenWithVectors,
    );
    if (contents.vectors.size !== vectorLabels.length - forgottenWithVectors.length)
      throw new IndexFileRejected('the vectors index does not hold the memories its snapshot says');
  };
  if (!deferVectors) {
    await load(opened.vectors);
    return { contents, loadVectors: undefined };
  }
  const loadVectors = async () => {
    const file = await openSnapshotFile(folder, vectors);
    try {
      await load(file);
    } finally {
      await file.handle.close();
    }
  };
  return { contents, loadVectors };
}

/** Saves both indexes of `contents` (the log up to `log`) under new names: the snapshot to name them. */
export async function writeSnapshot(folder: string, log: LogPosition, contents: Contents): Promise<Snapshot> {
  const { vectors, words } = contents;
  const generation = randomBytes(6).toString('hex');
  const wordsFile = `words-${generation}.json`;
  const wordsJson = Buffer.from(words.toJSON());
  await writeDurable(join(folder, wordsFile), wordsJson);
  let vectorsFile: string | undefined;
  if (vectors) {
    vectorsFile = `vectors-${generation}.hnsw`;
    await vectors.write(join(folder, vectorsFile));
    await flush(join(folder, vectorsFile));
  }
  return {
    logId: log.id,
    records: log.records,
    logBytes: log.bytes,
    words: { file: wordsFile, bytes: wordsJson.length, sha256: sha256(wordsJson) },
    ...(vectorsFile && { vectors: await describeFile(folder, vectorsFile) }),
  };
}

/**
 * Removes the snapshot files neither `snapshot` nor the log (`logVectors`, its header's) names, and
 * temporary logs of killed writers.
 */
export async function removeUnnamed(
  folder: string,
  snapshot: Snapshot | undefined,
  logVectors: SnapshotFile | undefined,
): Promise<void> {
  const named = new Set([snapshot?.words.file, snapshot?.vectors?.file, logVectors?.file]);
  for (const name of await readdir(folder)) {
    const stale = (VECTORS_FILE.test(name) || WORDS_FILE.test(name)) && !named.has(name);
    if (stale || TEMP_LOG_FILE.test(name)) await unlink(join(folder, name)).catch(() => undefined);
  }
}

async function openSnapshotFile(folder: string, file: SnapshotFile): Promise<OpenFile> {
  let opened: OpenFile | undefined;
  try {
    opened = await openRegular(join(folder, file.file), MAX_SNAPSHOT_BYTES);
  } catch (error) {
    if (error instanceof UnusableFile) throw new IndexFileRejected(`${file.file}: ${error.message}`);
    throw error;
  }
  if (!opened) throw new SnapshotGone(`${file.file} is missing`);
  return opened;
}

/** A snapshot file's bytes, once its size and digest are the manifest's. */
async function verified(opened: OpenFile, file: SnapshotFile): Promise<Buffer> {
  // The size first: a file of another size is not read at all.
  if (opened.size === file.bytes) {
    const bytes = await readAll(opened);
    if (bytes.length === file.bytes && sha256(bytes) === file.sha256) return bytes;
  }
  throw notDescribed(file);
}

/**
 * A snapshot file's bytes, front to back, READ_CHUNK_BYTES at a time (each valid until the next is
 * asked for: one buffer is reused), hashed on the way; after the last, it throws IndexFileRejected unless
 * its size and digest are the manifest's. One pass, and never the whole file in memory.
 */
async function* verifiedChunks(opened: OpenFile, file: SnapshotFile): AsyncGenerator<Buffer> {
  // The size first: a file of another size is not read at all.
  if (opened.size !== file.bytes) throw notDescribed(file);
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafeSlow(Math.min(READ_CHUNK_BYTES, opened.size));
  let read = 0;
  while (read < opened.size) {
    const length = Math.min(buffer.length, opened.size - read);
    const { bytesRead } = await opened.handle.read(buffer, 0, length, read);
    if (bytesRead === 0) break;
    const chunk = buffer.subarray(0, bytesRead);
    hash.update(chunk);
    read += bytesRead;
    yield chunk;
  }
  if (read !== file.bytes || hash.digest('hex') !== file.sha256) throw notDescribed(file);
}

function notDescribed(file: SnapshotFile): IndexFileRejected {
  return new IndexFileRejected(`${file.file} is not the file its manifest describes`);
}

/** A file hnswlib wrote, as the manifest names it: read back for its digest. */
async function describeFile(folder: string, file: string): Promise<SnapshotFile> {
  const path = join(folder, file);
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return { file: basename(path), bytes: (await stat(path)).size, sha256: hash.digest('hex') };
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}
