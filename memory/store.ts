/**
 * Long-term memory: one namespace's texts, with metadata, embeddings and two indexes searched together
 * (fusion.ts): vectors in hnswlib (vector-index.ts) and words in BM25 (word-index.ts).
 *
 * On disk, in the namespace's folder:
 * - `items.jsonl`, the log (records.ts): every add and forget, appended and flushed before a call
 *   returns. It is the truth; everything else can be rebuilt from it.
 * - `manifest.json` (manifest.ts): space, dimensions, embedding model, and the snapshot: index files
 *   holding the log's first N records, so opening replays only the records after them.
 * - `vectors-*.hnsw` and `words-*.json`, the snapshot's files, new names each time, so the manifest
 *   (replaced atomically) always names complete files.
 *
 * A kill at any moment leaves a readable namespace: a cut last log line is ignored; a snapshot or a
 * compaction cut short is never named by the manifest. Writers take the namespace's lock (lock.ts) and
 * first read what other processes appended.
 *
 * Embeddings come from the embedder when one answers. When none does (no server, no embedding model,
 * another model than the namespace's), memory searches by words alone and says so once; it never
 * pretends. `reindex` embeds every memory again with the embedder of now.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import {
  MemoryDamaged,
  openFilePath,
  openRegular,
  readAll,
  readRange,
  readRegular,
  UnusableFile,
  type OpenFile,
} from './files.js';
import { replaceFile } from '../src/write-file.js';
import { fuse, type Fused } from './fusion.js';
import { withLock } from './lock.js';
import {
  MANIFEST_FORMAT,
  manifestSchema,
  VECTORS_FILE,
  WORDS_FILE,
  type Manifest,
  type SnapshotFile,
} from './manifest.js';
import {
  decodeVector,
  encodeVector,
  headerLine,
  LogDamaged,
  parseHeader,
  parseRecords,
  recordLine,
  type AddRecord,
  type LogRecord,
} from './records.js';
import { DEFAULT_SHAPE, IndexFileRejected, VectorIndex } from './vector-index.js';
import { WordIndex } from './word-index.js';

export { MemoryDamaged } from './files.js';

export const LOG_FILE = 'items.jsonl';
export const MANIFEST_FILE = 'manifest.json';

/**
 * The largest log read (it is read whole): as large as Node's readFile ever read. A namespace's other
 * files are bounded by it: the manifest is a few lines, a snapshot file holds what the log does.
 */
const MAX_LOG_BYTES = 2 ** 31 - 1;
const MAX_MANIFEST_BYTES = 1 << 20;
const MAX_SNAPSHOT_BYTES = 2 ** 32;

/** Appending to the log: never through a symlink, nor blocking on a FIFO (0 where a platform lacks one). */
const APPEND_FLAGS =
  constants.O_WRONLY | constants.O_APPEND | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * Times a reader reads the manifest again when the snapshot it names was replaced before its files
 * could be opened (a writer removes the old ones right after naming new ones), before rebuilding.
 */
const SNAPSHOT_ATTEMPTS = 5;

/** The most characters one memory may hold. */
export const MAX_TEXT_CHARS = 1_000_000;

/** What is embedded of a memory: its beginning, within every embedding model's input limit. */
export const EMBED_CHARS = 8_000;

/** Texts per embedding request. */
export const EMBED_BATCH = 64;

/** Forgotten memories in the log past this share of it (and at least COMPACT_MIN) are compacted away. */
export const COMPACT_SHARE = 0.25;
export const COMPACT_MIN = 50;

/**
 * A snapshot is written on close once the records after the last one reach 1/SNAPSHOT_RATIO of the
 * log: its cost grows with the namespace, so it is amortized over as many appends.
 */
export const SNAPSHOT_RATIO = 50;

/** Unsaved records past which an add saves the indexes itself, without waiting for close. */
export const SNAPSHOT_WHILE_OPEN = 1_000;

/** What turns texts into vectors: an OpenAI-compatible `/v1/embeddings` model (llm/), or a test's. */
export interface Embedder {
  readonly modelName: string;
  embed(texts: string[], signal?: AbortSignal): Promise<{ vectors: number[][] }>;
}

export interface MemoryItem {
  id: string;
  text: string;
  meta: Record<string, string>;
  /** When it was added, ISO 8601. */
  at: string;
  /** Whether it has a vector (else only its words find it). */
  embedded: boolean;
}

export type MemoryHit = MemoryItem & Omit<Fused, 'id'>;

export interface MemoryStats {
  folder: string;
  items: number;
  embedded: number;
  /** Forgotten memories still taking room in the log and index, until compaction. */
  forgottenPending: number;
  model?: string;
  dimensions?: number;
  /** Why search goes by words alone, when it does. */
  wordsOnly?: string;
  logBytes: number;
  /** Bytes of the snapshot's index files. */
  indexBytes: number;
  /** Records of the log the snapshot holds, of all. */
  snapshotRecords: number;
  records: number;
}

export interface OpenOptions {
  /** The namespace's folder; made on the first write. */
  folder: string;
  embedder?: Embedder;
  /** Told once when search goes by words alone, and when a snapshot could not be used. */
  onNotice?: (message: string) => void;
}

interface Embedded {
  model: string;
  vectors: Array<number[] | undefined>;
}

interface Item extends MemoryItem {
  label: number;
}

/** What the indexes hold: rebuilt whole, or brought up to date record by record. */
interface Contents {
  items: Map<string, Item>;
  /** The id of each label (labels number the log's add records in order). */
  ids: string[];
  /** Labels of forgotten memories still in the log. */
  forgotten: Set<number>;
  nextLabel: number;
  vectors: VectorIndex | undefined;
  words: WordIndex;
}

/** Where the log was read up to. */
interface LogPosition {
  id: string;
  bytes: number;
  records: number;
  /** The file's inode: a compaction elsewhere replaces the file. */
  inode: number;
  /**
   * Its header line, bytes as read: a compaction's new log can get the inode of one removed before
   * (ext4 hands a freed inode to the next new file), but never the header, whose id is new.
   */
  header: Buffer;
}

/** A snapshot's files, open: what a writer does to the folder meanwhile cannot change them. */
interface OpenSnapshot {
  words: OpenFile;
  vectors: OpenFile | undefined;
}

/** A file the manifest names is not there: a writer replaced the snapshot after the manifest was read. */
class SnapshotGone extends IndexFileRejected {}

export class MemoryStore {
  readonly folder: string;
  readonly #embedder: Embedder | undefined;
  readonly #notice: (message: string) => void;
  #manifest: Manifest;
  #contents: Contents;
  #log: LogPosition | undefined;
  #wordsOnly: string | undefined;
  #noticed = false;

  private constructor(options: OpenOptions, manifest: Manifest) {
    this.folder = options.folder;
    this.#embedder = options.embedder;
    this.#notice = options.onNotice ?? (() => undefined);
    this.#manifest = manifest;
    this.#contents = emptyContents();
    this.#wordsOnly = this.#embedder ? modelMismatch(manifest, this.#embedder) : 'no embedder is configured';
  }

  /** Opens the namespace in `folder` (nothing there yet is an empty one). Damaged files throw MemoryDamaged. */
  static async open(options: OpenOptions): Promise<MemoryStore> {
    const store = new MemoryStore(options, await readManifest(options.folder));
    await store.#load();
    return store;
  }

  /** Adds a memory; returns its id. */
  async add(text: string, meta: Record<string, string> = {}, signal?: AbortSignal): Promise<string> {
    const [id] = await this.addMany([{ text, meta }], signal);
    return id!;
  }

  /** Adds memories in order, embedding them in batches; `onProgress` hears how many are stored. */
  async addMany(
    entries: ReadonlyArray<{ text: string; meta?: Record<string, string> }>,
    signal?: AbortSignal,
    onProgress?: (done: number, total: number) => void,
  ): Promise<string[]> {
    for (const { text } of entries) checkText(text);
    const ids: string[] = [];
    for (let start = 0; start < entries.length; start += EMBED_BATCH) {
      const batch = entries.slice(start, start + EMBED_BATCH);
      const embedded = await this.#embed(
        batch.map((entry) => entry.text),
        signal,
      );
      await this.#write(async () => {
        const records = batch.map((entry, i): AddRecord => ({
          op: 'add',
          id: this.#newId(),
          text: entry.text,
          meta: entry.meta ?? {},
          at: new Date().toISOString(),
          ...(embedded?.vectors[i] && { model: embedded.model, vector: encodeVector(embedded.vectors[i]) }),
        }));
        await this.#append(records);
        ids.push(...records.map((record) => record.id));
      });
      onProgress?.(ids.length, entries.length);
    }
    // A bulk add is saved whole, so a new process answers exactly as this one; a process that adds one
    // at a time and never closes its store (a long conversation) still saves now and then.
    const bulk = entries.length >= SNAPSHOT_WHILE_OPEN;
    if (bulk || this.#unsaved() >= SNAPSHOT_WHILE_OPEN)
      await this.#write(() => this.#snapshotWhenDue(bulk ? 1 : SNAPSHOT_WHILE_OPEN, bulk));
    return ids;
  }

  /** The `k` memories closest to `query`, by meaning and by words, closest first. */
  async search(query: string, k: number, signal?: AbortSignal): Promise<MemoryHit[]> {
    await this.#catchUp();
    const { items, vectors, words } = this.#contents;
    const wanted = Math.max(k * 3, 20);
    let meaning: Array<{ id: string; similarity: number }> = [];
    if (vectors && vectors.size > 0 && query.trim() !== '') {
      const vector = (await this.#embed([query], signal))?.vectors[0];
      if (vector)
        meaning = vectors.search(vector, wanted).map(({ label, similarity }) => ({
          id: this.#contents.ids[label]!,
          similarity: Number(similarity.toFixed(4)),
        }));
    }
    const lexical = words.search(query, wanted);
    const textOf = (id: string) => items.get(id)?.text ?? '';
    return fuse(meaning, lexical, query, textOf, k).flatMap((hit) => {
      const item = items.get(hit.id);
      return item ? [{ ...publicItem(item), ...hit }] : [];
    });
  }

  /** Every memory, oldest first. */
  async list(): Promise<MemoryItem[]> {
    await this.#catchUp();
    return [...this.#contents.items.values()].map(publicItem);
  }

  /** Forgets the memories with these ids; returns the ids it held. */
  async forget(ids: readonly string[]): Promise<string[]> {
    await this.#catchUp();
    // Nothing to forget takes no lock and leaves no folder behind.
    if (!ids.some((id) => this.#contents.items.has(id))) return [];
    let forgotten: string[] = [];
    await this.#write(async () => {
      forgotten = [...new Set(ids)].filter((id) => this.#contents.items.has(id));
      await this.#append(forgotten.map((id): LogRecord => ({ op: 'forget', id })));
      if (this.#shouldCompact()) await this.#compact();
    });
    return forgotten;
  }

  /** Forgets every memory whose text contains `text` (any case); returns their ids. */
  async forgetMatching(text: string): Promise<string[]> {
    await this.#catchUp();
    const needle = text.toLowerCase();
    const ids = [...this.#contents.items.values()]
      .filter((item) => item.text.toLowerCase().includes(needle))
      .map((item) => item.id);
    return this.forget(ids);
  }

  /** Embeds every memory again with the embedder, and rebuilds the namespace with those vectors. */
  async reindex(signal?: AbortSignal, onProgress?: (done: number, total: number) => void): Promise<number> {
    const embedder = this.#embedder;
    if (!embedder) throw new MemoryDamaged('reindexing needs an embedder: configure an embedding model');
    return this.#write(async () => {
      const items = [...this.#contents.items.values()];
      const vectors = new Map<string, number[]>();
      let dimensions: number | undefined;
      for (let start = 0; start < items.length; start += EMBED_BATCH) {
        const batch = items.slice(start, start + EMBED_BATCH);
        const texts = batch.map((item) => item.text.slice(0, EMBED_CHARS));
        const { vectors: made } = await embedder.embed(texts, signal);
        try {
          checkVectors(made, texts.length, (dimensions ??= made[0]?.length ?? 0));
        } catch (error) {
          throw new MemoryDamaged(`the embedder ${embedder.modelName} ${(error as Error).message}`);
        }
        made.forEach((vector, i) => {
          if (vector.some((value) => value !== 0)) vectors.set(batch[i]!.id, vector);
        });
        onProgress?.(Math.min(start + EMBED_BATCH, items.length), items.length);
      }
      const { snapshot: _old, dimensions: _d, model: _m, ...rest } = this.#manifest;
      this.#manifest = {
        ...rest,
        ...(dimensions !== undefined && { dimensions, model: embedder.modelName }),
      };
      this.#wordsOnly = undefined;
      this.#noticed = false;
      await this.#compact(vectors);
      return items.length;
    });
  }

  async stats(): Promise<MemoryStats> {
    await this.#catchUp();
    const { items, forgotten } = this.#contents;
    const snapshot = this.#manifest.snapshot;
    const log = this.#log;
    return {
      folder: this.folder,
      items: items.size,
      embedded: [...items.values()].filter((item) => item.embedded).length,
      forgottenPending: forgotten.size,
      ...(this.#manifest.model !== undefined && { model: this.#manifest.model }),
      ...(this.#manifest.dimensions !== undefined && { dimensions: this.#manifest.dimensions }),
      ...(this.#wordsOnly !== undefined && { wordsOnly: this.#wordsOnly }),
      logBytes: log?.bytes ?? 0,
      indexBytes: (snapshot?.vectors?.bytes ?? 0) + (snapshot?.words.bytes ?? 0),
      snapshotRecords: snapshot && snapshot.logId === log?.id ? snapshot.records : 0,
      records: log?.records ?? 0,
    };
  }

  /** Saves the indexes when enough was appended since they were last saved (SNAPSHOT_RATIO). */
  async close(): Promise<void> {
    if (this.#unsaved() > 0) await this.#write(() => this.#snapshotWhenDue(1));
  }

  // --- loading -------------------------------------------------------------------------------------

  /**
   * Reads the log, from the snapshot when it is usable, else whole. The snapshot's files are opened
   * first, right after the manifest was read: once open, a writer that replaces them cannot take them
   * away. One already gone was replaced a moment before: the manifest is read again for the new one.
   */
  async #load(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const opened = await this.#openSnapshot();
      try {
        if (opened instanceof SnapshotGone && attempt < SNAPSHOT_ATTEMPTS) {
          this.#setManifest(await readManifest(this.folder));
          continue;
        }
        return await this.#loadWith(opened);
      } finally {
        if (!(opened instanceof IndexFileRejected)) {
          await opened?.words.handle.close();
          await opened?.vectors?.handle.close();
        }
      }
    }
  }

  /** The log, read with the snapshot's files (`opened`, or why they cannot be used) when they fit it. */
  async #loadWith(opened: OpenSnapshot | IndexFileRejected | undefined): Promise<void> {
    const log = await this.#openLog();
    if (!log) {
      this.#contents = emptyContents();
      this.#log = undefined;
      return;
    }
    let file: Buffer;
    try {
      file = await readAll(log);
    } finally {
      await log.handle.close();
    }
    const headerEnd = file.indexOf(0x0a) + 1;
    if (headerEnd === 0) throw this.#damaged('its log has no header line');
    const header = this.#parse(() => parseHeader(file.toString('utf8', 0, headerEnd - 1)));
    const { records, bytes } = this.#parse(() => parseRecords(file.subarray(headerEnd), headerEnd, 2));
    const snapshot = this.#manifest.snapshot;
    let contents: Contents | undefined;
    let from = 0;
    if (opened && snapshot && snapshot.logId === header.id && snapshot.records <= records.length) {
      contents = await this.#loadSnapshot(records.slice(0, snapshot.records), opened).catch(
        (error: unknown) => {
          if (!(error instanceof IndexFileRejected)) throw error;
          this.#notice(
            `memory in ${this.folder}: the saved index was not used (${error.message}); rebuilt from the log`,
          );
          return undefined;
        },
      );
      if (contents) from = snapshot.records;
    }
    this.#contents = contents ?? emptyContents();
    for (const record of records.slice(from)) this.#apply(record);
    this.#log = {
      id: header.id,
      bytes,
      records: records.length,
      inode: log.inode,
      header: Buffer.from(file.subarray(0, headerEnd)),
    };
  }

  /** The log, open, or undefined when there is none yet; one that is not a regular file is damage. */
  async #openLog(): Promise<OpenFile | undefined> {
    try {
      return await openRegular(join(this.folder, LOG_FILE), MAX_LOG_BYTES);
    } catch (error) {
      if (error instanceof UnusableFile) throw this.#damaged(error.message);
      throw error;
    }
  }

  /**
   * The manifest's snapshot files, open (undefined: it names none), or why they cannot be used: the
   * store rebuilds from the log then, when the snapshot is of this log at all.
   */
  async #openSnapshot(): Promise<OpenSnapshot | IndexFileRejected | undefined> {
    const snapshot = this.#manifest.snapshot;
    if (!snapshot) return undefined;
    let words: OpenFile | undefined;
    try {
      words = await this.#openSnapshotFile(snapshot.words);
      const vectors = snapshot.vectors && (await this.#openSnapshotFile(snapshot.vectors));
      return { words, vectors };
    } catch (error) {
      await words?.handle.close();
      if (error instanceof IndexFileRejected) return error;
      throw error;
    }
  }

  async #openSnapshotFile(file: SnapshotFile): Promise<OpenFile> {
    let opened: OpenFile | undefined;
    try {
      opened = await openRegular(join(this.folder, file.file), MAX_SNAPSHOT_BYTES);
    } catch (error) {
      if (error instanceof UnusableFile) throw new IndexFileRejected(`${file.file}: ${error.message}`);
      throw error;
    }
    if (!opened) throw new SnapshotGone(`${file.file} is missing`);
    return opened;
  }

  /** The snapshot's indexes, with the items of the records it holds. */
  async #loadSnapshot(held: LogRecord[], opened: OpenSnapshot | IndexFileRejected): Promise<Contents> {
    if (opened instanceof IndexFileRejected) throw opened;
    const snapshot = this.#manifest.snapshot!;
    const contents = emptyContents();
    // Labels, items and forgotten memories as the records make them; the indexes come from the files.
    const vectorLabels: number[] = [];
    for (const record of held) {
      if (record.op === 'add') {
        const label = contents.nextLabel++;
        // The vectors themselves are in the index file: only whether the record has one matters here.
        const embedded = this.#hasVector(record);
        contents.items.set(record.id, itemOf(record, label, embedded));
        contents.ids[label] = record.id;
        if (embedded) vectorLabels.push(label);
      } else {
        const item = contents.items.get(record.id);
        if (!item) continue;
        contents.items.delete(record.id);
        contents.forgotten.add(item.label);
      }
    }
    const words = await verified(opened.words, snapshot.words);
    try {
      contents.words = WordIndex.load(words.toString('utf8'));
    } catch {
      throw new IndexFileRejected('the words index is not MiniSearch JSON');
    }
    if (contents.words.size !== contents.items.size)
      throw new IndexFileRejected('the words index does not hold the memories its snapshot says');
    if (vectorLabels.length > 0) {
      const { vectors } = snapshot;
      const { dimensions } = this.#manifest;
      if (!vectors || !opened.vectors || dimensions === undefined)
        throw new IndexFileRejected('the vectors index is missing');
      const bytes = await verified(opened.vectors, vectors);
      const forgottenWithVectors = vectorLabels.filter((label) => contents.forgotten.has(label));
      contents.vectors = await VectorIndex.load(
        // hnswlib opens a path: this one is the file just checked, whatever the folder holds now.
        openFilePath(opened.vectors, join(this.folder, vectors.file)),
        bytes,
        { dimensions, ...this.#shape() },
        vectorLabels,
        forgottenWithVectors,
      );
      if (contents.vectors.size !== vectorLabels.length - forgottenWithVectors.length)
        throw new IndexFileRejected('the vectors index does not hold the memories its snapshot says');
    }
    return contents;
  }

  /**
   * Reads what other processes appended since; a log replaced by a compaction is read again whole. What
   * is read is the file whose inode, size and header were just checked.
   */
  async #catchUp(): Promise<void> {
    const file = await this.#openLog();
    const log = this.#log;
    if (!file) {
      if (log) await this.#reload();
      return;
    }
    try {
      if (!log || !(await sameLog(file, log))) return await this.#reload();
      if (file.size === log.bytes) return;
      const chunk = await readRange(file, log.bytes, file.size);
      const { records, bytes } = this.#parse(() => parseRecords(chunk, log.bytes, log.records + 2));
      // Another process's first vectors: the manifest now has their shape, without which they are not read.
      if (this.#manifest.dimensions === undefined && records.some((record) => hasVectorField(record)))
        return await this.#reload();
      for (const record of records) this.#apply(record);
      this.#log = { ...log, bytes, records: log.records + records.length };
    } finally {
      await file.handle.close();
    }
  }

  async #reload(): Promise<void> {
    this.#setManifest(await readManifest(this.folder));
    await this.#load();
  }

  #setManifest(manifest: Manifest): void {
    this.#manifest = manifest;
    if (this.#embedder) this.#wordsOnly = modelMismatch(manifest, this.#embedder);
  }

  #apply(record: LogRecord): void {
    const contents = this.#contents;
    if (record.op === 'forget') {
      const item = contents.items.get(record.id);
      if (!item) return;
      contents.items.delete(record.id);
      contents.forgotten.add(item.label);
      contents.words.remove(item.id);
      if (item.embedded) contents.vectors?.remove(item.label);
      return;
    }
    if (contents.items.has(record.id)) throw this.#damaged(`the id ${record.id} is added twice`);
    const label = contents.nextLabel++;
    const { dimensions } = this.#manifest;
    const vector =
      this.#hasVector(record) && dimensions !== undefined
        ? decodeVector(record.vector!, dimensions)
        : undefined;
    contents.items.set(record.id, itemOf(record, label, vector !== undefined));
    contents.ids[label] = record.id;
    contents.words.add(record.id, record.text);
    if (vector) {
      contents.vectors ??= VectorIndex.create({ dimensions: dimensions!, ...this.#shape() });
      contents.vectors.add(label, vector);
    }
  }

  /** Whether a record has a vector of the namespace's model and dimensions (its numbers not yet read). */
  #hasVector(record: AddRecord): boolean {
    const { model, dimensions } = this.#manifest;
    return (
      record.vector !== undefined &&
      record.model === model &&
      dimensions !== undefined &&
      record.vector.length === Math.ceil((dimensions * 4) / 3) * 4
    );
  }

  // --- writing -------------------------------------------------------------------------------------

  /** Runs `work` holding the namespace's lock, after reading what other writers changed. */
  async #write<T>(work: () => Promise<T>): Promise<T> {
    await mkdir(this.folder, { recursive: true });
    return withLock(this.folder, async () => {
      // What this writes starts from the manifest as the last writer left it: its snapshot, its shape.
      const manifest = await readManifest(this.folder);
      const { dimensions, model } = this.#manifest;
      if (manifest.dimensions !== dimensions || manifest.model !== model) await this.#reload();
      else this.#manifest = manifest;
      await this.#catchUp();
      return work();
    });
  }

  /** Appends records to the log, flushed, then applies them. */
  async #append(records: LogRecord[]): Promise<void> {
    if (records.length === 0) return;
    const path = join(this.folder, LOG_FILE);
    const log = this.#log ?? (await this.#startLog(path));
    const text = records.map(recordLine).join('');
    // The shape first: a reader that sees these records must find the dimensions they have.
    if (this.#manifest.dimensions === undefined) await this.#setShapeFrom(records);
    const handle = await open(path, APPEND_FLAGS);
    try {
      const now = await handle.stat();
      // Under the lock, only a process that ignores it replaces the log.
      if (!now.isFile() || now.ino !== log.inode)
        throw new MemoryDamaged(`${path} was replaced by another file while it was being written`);
      // A cut last line, left by a writer that was killed: new records must not join it.
      if (now.size > log.bytes) await handle.truncate(log.bytes);
      await handle.writeFile(text);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    for (const record of records) this.#apply(record);
    this.#log = { ...log, bytes: log.bytes + Buffer.byteLength(text), records: log.records + records.length };
  }

  /** A new, empty log with a header; the manifest is written first, so it is there for the log. */
  async #startLog(path: string): Promise<LogPosition> {
    await this.#writeManifest();
    const id = randomBytes(8).toString('hex');
    const header = headerLine(id);
    const handle = await open(path, 'wx');
    try {
      await handle.writeFile(header);
      await handle.sync();
      const bytes = Buffer.from(header);
      return { id, bytes: bytes.length, records: 0, inode: (await handle.stat()).ino, header: bytes };
    } finally {
      await handle.close();
    }
  }

  /** The first vector fixes the namespace's dimensions and model. */
  async #setShapeFrom(records: LogRecord[]): Promise<void> {
    const first = records.find(
      (record): record is AddRecord => record.op === 'add' && record.vector !== undefined,
    );
    if (!first) return;
    const dimensions = Buffer.from(first.vector!, 'base64').length / 4;
    this.#manifest = { ...this.#manifest, dimensions, model: first.model! };
    await this.#writeManifest();
  }

  /** Records of the log the snapshot does not hold. */
  #unsaved(): number {
    const log = this.#log;
    if (!log) return 0;
    const snapshot = this.#manifest.snapshot;
    return log.records - (snapshot?.logId === log.id ? snapshot.records : 0);
  }

  /**
   * Saves the indexes once at least `least` records are unsaved, and (unless `whatever`) 1/SNAPSHOT_RATIO
   * of the log.
   */
  async #snapshotWhenDue(least: number, whatever = false): Promise<void> {
    const unsaved = this.#unsaved();
    if (unsaved >= least && (whatever || unsaved * SNAPSHOT_RATIO >= this.#log!.records))
      await this.#snapshot();
  }

  #shouldCompact(): boolean {
    const { forgotten, nextLabel } = this.#contents;
    return forgotten.size >= COMPACT_MIN && forgotten.size >= nextLabel * COMPACT_SHARE;
  }

  /**
   * Writes a log of the live memories only (with `vectors`, new ones, when reindexing), its snapshot,
   * then swaps it in and names it in the manifest. A kill before the swap leaves the old log and
   * manifest; after it, the manifest's snapshot names the old log, so the new one is read whole.
   */
  async #compact(vectors?: Map<string, number[]>): Promise<void> {
    const old = this.#contents;
    const id = randomBytes(8).toString('hex');
    const records = [...old.items.values()].map((item): AddRecord => {
      const vector = vectors
        ? vectors.get(item.id)
        : item.embedded
          ? old.vectors!.vector(item.label)
          : undefined;
      return {
        op: 'add',
        id: item.id,
        text: item.text,
        meta: item.meta,
        at: item.at,
        ...(vector && { model: this.#manifest.model!, vector: encodeVector(vector) }),
      };
    });
    const text = headerLine(id) + records.map(recordLine).join('');
    const path = join(this.folder, LOG_FILE);
    const temp = join(this.folder, `.${LOG_FILE}.${randomBytes(4).toString('hex')}.tmp`);
    await writeDurable(temp, text);
    this.#contents = emptyContents();
    for (const record of records) this.#apply(record);
    const bytes = Buffer.byteLength(text);
    await rename(temp, path);
    this.#log = {
      id,
      bytes,
      records: records.length,
      inode: (await stat(path)).ino,
      header: Buffer.from(headerLine(id)),
    };
    await this.#snapshot();
  }

  /** Saves both indexes under new names, then the manifest naming them, then removes older ones. */
  async #snapshot(): Promise<void> {
    const log = this.#log!;
    const { vectors, words } = this.#contents;
    const generation = randomBytes(6).toString('hex');
    const wordsFile = `words-${generation}.json`;
    const wordsJson = Buffer.from(words.toJSON());
    await writeDurable(join(this.folder, wordsFile), wordsJson);
    let vectorsFile: string | undefined;
    if (vectors) {
      vectorsFile = `vectors-${generation}.hnsw`;
      await vectors.write(join(this.folder, vectorsFile));
      await flush(join(this.folder, vectorsFile));
    }
    this.#manifest = {
      ...this.#manifest,
      snapshot: {
        logId: log.id,
        records: log.records,
        logBytes: log.bytes,
        words: { file: wordsFile, bytes: wordsJson.length, sha256: sha256(wordsJson) },
        ...(vectorsFile && { vectors: await describeFile(this.folder, vectorsFile) }),
      },
    };
    await this.#writeManifest();
    await this.#removeUnnamed();
  }

  /** Removes snapshot files the manifest does not name, and temporary files of killed writers. */
  async #removeUnnamed(): Promise<void> {
    const snapshot = this.#manifest.snapshot;
    const named = new Set([snapshot?.words.file, snapshot?.vectors?.file]);
    for (const name of await readdir(this.folder)) {
      const stale = (VECTORS_FILE.test(name) || WORDS_FILE.test(name)) && !named.has(name);
      if (stale || /^\.items\.jsonl\.[0-9a-f]+\.tmp$/.test(name))
        await unlink(join(this.folder, name)).catch(() => undefined);
    }
  }

  async #writeManifest(): Promise<void> {
    await replaceFile(join(this.folder, MANIFEST_FILE), `${JSON.stringify(this.#manifest, null, 2)}\n`, {
      durable: true,
    });
  }

  // --- embedding -----------------------------------------------------------------------------------

  /**
   * Vectors for `texts` (none for a text without direction, such as one without words), or undefined
   * when search goes by words alone (said once).
   */
  async #embed(texts: string[], signal?: AbortSignal): Promise<Embedded | undefined> {
    const embedder = this.#embedder;
    if (!embedder || this.#wordsOnly !== undefined) return this.#wordsOnlyNotice();
    try {
      const { vectors } = await embedder.embed(
        texts.map((text) => text.slice(0, EMBED_CHARS)),
        signal,
      );
      try {
        checkVectors(vectors, texts.length, this.#manifest.dimensions ?? vectors[0]?.length ?? 0);
      } catch (problem) {
        return this.#wordsOnlyNotice(`the embedder ${embedder.modelName} ${(problem as Error).message}`);
      }
      return {
        model: embedder.modelName,
        vectors: vectors.map((vector) => (vector.some((value) => value !== 0) ? vector : undefined)),
      };
    } catch (error) {
      if (signal?.aborted) throw error;
      return this.#wordsOnlyNotice(`no embeddings (${(error as Error).message})`);
    }
  }

  /** Says once why search goes by words alone (`reason`: a new one, from now on). */
  #wordsOnlyNotice(reason?: string): undefined {
    if (reason !== undefined) this.#wordsOnly = reason;
    if (!this.#noticed) {
      this.#noticed = true;
      this.#notice(`memory searches by words only: ${this.#wordsOnly}`);
    }
    return undefined;
  }

  #shape() {
    return { m: this.#manifest.m, efConstruction: this.#manifest.efConstruction };
  }

  #newId(): string {
    for (;;) {
      const id = randomBytes(6).toString('hex');
      if (!this.#contents.items.has(id)) return id;
    }
  }

  #parse<T>(read: () => T): T {
    try {
      return read();
    } catch (error) {
      if (error instanceof LogDamaged) throw this.#damaged(`its log ${error.message}`);
      throw error;
    }
  }

  #damaged(reason: string): MemoryDamaged {
    return new MemoryDamaged(`${join(this.folder, LOG_FILE)} cannot be read: ${reason}`);
  }
}

function emptyContents(): Contents {
  return {
    items: new Map(),
    ids: [],
    forgotten: new Set(),
    nextLabel: 0,
    vectors: undefined,
    words: WordIndex.create(),
  };
}

/** Whether `file` is still the log read up to `log`, grown or not. */
async function sameLog(file: OpenFile, log: LogPosition): Promise<boolean> {
  if (file.inode !== log.inode || file.size < log.bytes) return false;
  return (await readRange(file, 0, log.header.length)).equals(log.header);
}

function hasVectorField(record: LogRecord): boolean {
  return record.op === 'add' && record.vector !== undefined;
}

function itemOf(record: AddRecord, label: number, embedded: boolean): Item {
  return { id: record.id, text: record.text, meta: record.meta, at: record.at, embedded, label };
}

function publicItem({ label: _label, ...item }: Item): MemoryItem {
  return item;
}

function checkText(text: string): void {
  if (text.trim() === '') throw new RangeError('a memory cannot be empty');
  if (text.length > MAX_TEXT_CHARS)
    throw new RangeError(`a memory holds at most ${MAX_TEXT_CHARS.toLocaleString('en-US')} characters`);
}

/** Throws, saying what is wrong, unless `vectors` are `count` vectors of `dimensions` finite numbers. */
function checkVectors(vectors: readonly number[][], count: number, dimensions: number): void {
  if (vectors.length !== count) throw new Error(`gave ${vectors.length} vectors for ${count} texts`);
  for (const vector of vectors) {
    if (!Array.isArray(vector) || vector.length !== dimensions || dimensions === 0)
      throw new Error(`gave a vector of ${vector?.length} dimensions where ${dimensions} were expected`);
    if (!vector.every((value) => typeof value === 'number' && Number.isFinite(value)))
      throw new Error('gave a vector with a value that is not a finite number');
  }
}

/** Why the namespace's vectors cannot be used with `embedder`, or undefined. */
function modelMismatch(manifest: Manifest, embedder: Embedder): string | undefined {
  if (manifest.model === undefined || manifest.model === embedder.modelName) return undefined;
  return `its memories were embedded with ${manifest.model} and the embedder is ${embedder.modelName} (\`meta-agent memory reindex\` embeds them again)`;
}

async function readManifest(folder: string): Promise<Manifest> {
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

/** A snapshot file's bytes, once its size and digest are the manifest's. */
async function verified(opened: OpenFile, file: SnapshotFile): Promise<Buffer> {
  // The size first: a file of another size is not read at all.
  if (opened.size === file.bytes) {
    const bytes = await readAll(opened);
    if (bytes.length === file.bytes && sha256(bytes) === file.sha256) return bytes;
  }
  throw new IndexFileRejected(`${file.file} is not the file its manifest describes`);
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

async function writeDurable(path: string, text: string | Buffer): Promise<void> {
  const handle = await open(path, 'wx');
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function flush(path: string): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
