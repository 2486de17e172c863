/**
 * Long-term memory: one namespace's texts, with metadata, embeddings and two indexes searched together
 * (fusion.ts): vectors in hnswlib (vector-index.ts) and words in BM25 (word-index.ts). The store is
 * what callers open; it decides what each call changes and when the indexes are saved, and leaves the
 * folder to namespace.ts and the vectors to embedding.ts.
 *
 * On disk, in the namespace's folder:
 * - `items.jsonl`, the log (records.ts, log-file.ts): every add and forget, appended and flushed before
 *   a call returns. It is the truth, with the vectors file its header names: a snapshot rewrites it
 *   without the vectors that file holds, so that no vector is on disk twice.
 * - `manifest.json` (manifest.ts): space, dimensions, embedding model, and the snapshot (snapshot.ts):
 *   index files holding the log's first N records, so opening replays only the records after them.
 * - `vectors-*.hnsw` and `words-*.json`, the snapshot's files, new names each time, so the manifest
 *   (replaced atomically) always names complete files.
 *
 * A kill at any moment leaves a readable namespace. Writers take the namespace's lock (lock.ts) and
 * first read what other processes appended. Without an embedder that answers, memory searches by words
 * alone and says so once; `reindex` embeds every memory again with the embedder of now.
 */
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import { publicItem } from './contents.js';
import { embedAll, Embedding, type Embedder } from './embedding.js';
import { MemoryDamaged } from './files.js';
import { fuse } from './fusion.js';
import type { Memory, MemoryHit, MemoryItem, MemoryStats } from './memory.js';
import { Namespace } from './namespace.js';
import { listNamespaces } from './namespaces.js';
import { encodeVector, type AddRecord, type LogRecord } from './records.js';

export { MemoryDamaged } from './files.js';

/** The most characters one memory may hold. */
export const MAX_TEXT_CHARS = 1_000_000;

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

export type { MemoryHit, MemoryItem, MemoryStats } from './memory.js';

export interface OpenOptions {
  /** The namespace's folder; made on the first write. */
  folder: string;
  embedder?: Embedder;
  /** Told once when search goes by words alone, and when a snapshot could not be used. */
  onNotice?: (message: string) => void;
}

export class MemoryStore implements Memory {
  readonly folder: string;
  readonly #namespace: Namespace;
  readonly #embedding: Embedding;
  /** The namespace's dimensions now (the first vectors added fix them). */
  readonly #dimensions = () => this.#namespace.manifest.dimensions;

  private constructor(namespace: Namespace, embedding: Embedding) {
    this.folder = namespace.folder;
    this.#namespace = namespace;
    this.#embedding = embedding;
  }

  /** Opens the namespace in `folder` (nothing there yet is an empty one). Damaged files throw MemoryDamaged. */
  static async open(options: OpenOptions): Promise<MemoryStore> {
    const notice = options.onNotice ?? (() => undefined);
    const embedding = new Embedding(options.embedder, notice);
    const namespace = await Namespace.open({
      folder: options.folder,
      notice,
      onManifest: (manifest) => embedding.follow(manifest),
    });
    return new MemoryStore(namespace, embedding);
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
      const embedded = await this.#embedding.embed(
        batch.map((entry) => entry.text),
        this.#dimensions,
        signal,
      );
      await this.#namespace.write(async () => {
        const records = batch.map((entry, i): AddRecord => ({
          op: 'add',
          id: this.#newId(),
          text: entry.text,
          meta: entry.meta ?? {},
          at: new Date().toISOString(),
          ...(embedded?.vectors[i] && { model: embedded.model, vector: encodeVector(embedded.vectors[i]) }),
        }));
        await this.#namespace.append(records);
        ids.push(...records.map((record) => record.id));
      });
      onProgress?.(ids.length, entries.length);
    }
    // A bulk add is saved whole, so a new process answers exactly as this one; a process that adds one
    // at a time and never closes its store (a long conversation) still saves now and then.
    const bulk = entries.length >= SNAPSHOT_WHILE_OPEN;
    if (bulk || this.#namespace.unsaved() >= SNAPSHOT_WHILE_OPEN)
      await this.#namespace.write(() => this.#snapshotWhenDue(bulk ? 1 : SNAPSHOT_WHILE_OPEN, bulk));
    return ids;
  }

  /** The `k` memories closest to `query`, by meaning and by words, closest first. */
  async search(query: string, k: number, signal?: AbortSignal): Promise<MemoryHit[]> {
    const namespace = this.#namespace;
    await namespace.catchUp();
    const wanted = Math.max(k * 3, 20);
    let meaning: Array<{ id: string; similarity: number }> = [];
    if (namespace.mayHaveVectors && query.trim() !== '') {
      const vector = (await this.#embedding.embed([query], this.#dimensions, signal))?.vectors[0];
      // Only a search by meaning loads the vectors index (the open leaves it for later).
      const vectors = vector && (await namespace.vectors());
      if (vector && vectors && vectors.size > 0)
        meaning = vectors.search(vector, wanted).map(({ label, similarity }) => ({
          id: namespace.contents.ids[label]!,
          similarity: Number(similarity.toFixed(4)),
        }));
    }
    // Read after the vectors: loading them can read the namespace again (a rejected index file).
    const { items, words } = namespace.contents;
    const lexical = words.search(query, wanted);
    const textOf = (id: string) => items.get(id)?.text ?? '';
    return fuse(meaning, lexical, query, textOf, k).flatMap((hit) => {
      const item = items.get(hit.id);
      return item ? [{ ...publicItem(item), ...hit }] : [];
    });
  }

  /** Every memory, oldest first. */
  async list(): Promise<MemoryItem[]> {
    await this.#namespace.catchUp();
    return [...this.#namespace.contents.items.values()].map(publicItem);
  }

  /** Forgets the memories with these ids; returns the ids it held. */
  async forget(ids: readonly string[]): Promise<string[]> {
    const namespace = this.#namespace;
    await namespace.catchUp();
    // Nothing to forget takes no lock and leaves no folder behind.
    if (!ids.some((id) => namespace.contents.items.has(id))) return [];
    let forgotten: string[] = [];
    await namespace.write(async () => {
      forgotten = [...new Set(ids)].filter((id) => namespace.contents.items.has(id));
      await namespace.append(forgotten.map((id): LogRecord => ({ op: 'forget', id })));
      if (this.#shouldCompact()) await namespace.compact();
    });
    return forgotten;
  }

  /** Forgets every memory whose text contains `text` (any case); returns their ids. */
  async forgetMatching(text: string): Promise<string[]> {
    await this.#namespace.catchUp();
    const needle = text.toLowerCase();
    const ids = [...this.#namespace.contents.items.values()]
      .filter((item) => item.text.toLowerCase().includes(needle))
      .map((item) => item.id);
    return this.forget(ids);
  }

  /** Embeds every memory again with the embedder, and rebuilds the namespace with those vectors. */
  async reindex(signal?: AbortSignal, onProgress?: (done: number, total: number) => void): Promise<number> {
    const embedder = this.#embedding.embedder;
    if (!embedder) throw new MemoryDamaged('reindexing needs an embedder: configure an embedding model');
    return this.#namespace.write(async () => {
      const items = [...this.#namespace.contents.items.values()];
      const vectors = new Map<string, number[]>();
      let dimensions: number | undefined;
      for (let start = 0; start < items.length; start += EMBED_BATCH) {
        const batch = items.slice(start, start + EMBED_BATCH);
        const made = await embedAll(
          embedder,
          batch.map((item) => item.text),
          dimensions,
          signal,
        );
        dimensions ??= made[0]!.length;
        made.forEach((vector, i) => {
          if (vector.some((value) => value !== 0)) vectors.set(batch[i]!.id, vector);
        });
        onProgress?.(Math.min(start + EMBED_BATCH, items.length), items.length);
      }
      this.#embedding.reindexed();
      await this.#namespace.reembed(
        vectors,
        dimensions === undefined ? undefined : { dimensions, model: embedder.modelName },
      );
      return items.length;
    });
  }

  async stats(): Promise<MemoryStats> {
    const namespace = this.#namespace;
    await namespace.catchUp();
    const { items, forgotten } = namespace.contents;
    const { manifest, log } = namespace;
    const snapshot = manifest.snapshot;
    const wordsOnly = this.#embedding.wordsOnly;
    return {
      folder: this.folder,
      items: items.size,
      embedded: [...items.values()].filter((item) => item.embedded).length,
      forgottenPending: forgotten.size,
      ...(manifest.model !== undefined && { model: manifest.model }),
      ...(manifest.dimensions !== undefined && { dimensions: manifest.dimensions }),
      ...(wordsOnly !== undefined && { wordsOnly }),
      logBytes: log?.bytes ?? 0,
      indexBytes: (snapshot?.vectors?.bytes ?? 0) + (snapshot?.words.bytes ?? 0),
      snapshotRecords: snapshot && snapshot.logId === log?.id ? snapshot.records : 0,
      records: log?.records ?? 0,
    };
  }

  /** The namespaces in the folder beside this one's. */
  namespaces(): Promise<string[]> {
    return listNamespaces(dirname(this.folder));
  }

  /** Saves the indexes when enough was appended since they were last saved (SNAPSHOT_RATIO). */
  async close(): Promise<void> {
    if (this.#namespace.unsaved() > 0) await this.#namespace.write(() => this.#snapshotWhenDue(1));
  }

  /**
   * Saves the indexes once at least `least` records are unsaved, and (unless `whatever`) 1/SNAPSHOT_RATIO
   * of the log.
   */
  async #snapshotWhenDue(least: number, whatever = false): Promise<void> {
    const unsaved = this.#namespace.unsaved();
    if (unsaved >= least && (whatever || unsaved * SNAPSHOT_RATIO >= this.#namespace.log!.records))
      await this.#namespace.snapshot();
  }

  #shouldCompact(): boolean {
    const { forgotten, nextLabel } = this.#namespace.contents;
    return forgotten.size >= COMPACT_MIN && forgotten.size >= nextLabel * COMPACT_SHARE;
  }

  #newId(): string {
    for (;;) {
      const id = randomBytes(6).toString('hex');
      if (!this.#namespace.contents.items.has(id)) return id;
    }
  }
}

/** Throws a RangeError when `text` cannot be a memory: empty, or longer than MAX_TEXT_CHARS. */
export function checkText(text: string): void {
  if (text.trim() === '') throw new RangeError('a memory cannot be empty');
  if (text.length > MAX_TEXT_CHARS)
    throw new RangeError(`a memory holds at most ${MAX_TEXT_CHARS.toLocaleString('en-US')} characters`);
}
