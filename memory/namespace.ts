/**
 * A namespace's folder as this process last read it: the manifest, the contents of the indexes and
 * where the log was read up to. It opens the namespace (from the snapshot when it is usable, else the
 * log whole), catches up with what other processes appended, and makes every change to the folder
 * under its lock (lock.ts): appending records, compacting the log, saving a snapshot. What to change,
 * and when, is the store's (store.ts).
 *
 * A kill at any moment leaves a readable namespace: a cut last log line is ignored; a snapshot or a
 * compaction cut short is never named by the manifest.
 */
import { mkdir } from 'node:fs/promises';
import { applyRecord, emptyContents, liveRecords, type Contents } from './contents.js';
import { withLock } from './lock.js';
import {
  appendRecords,
  logDamaged,
  openLog,
  readAppended,
  readLog,
  sameLog,
  startLog,
  writeNewLog,
  type LogPosition,
} from './log-file.js';
import { readManifest, writeManifest, type Manifest } from './manifest.js';
import type { AddRecord, LogRecord } from './records.js';
import {
  closeSnapshot,
  loadSnapshot,
  openSnapshot,
  removeUnnamed,
  SnapshotGone,
  writeSnapshot,
  type OpenSnapshot,
} from './snapshot.js';
import { IndexFileRejected } from './vector-index.js';

/**
 * Times a reader reads the manifest again when the snapshot it names was replaced before its files
 * could be opened (a writer removes the old ones right after naming new ones), before rebuilding.
 */
const SNAPSHOT_ATTEMPTS = 5;

export interface NamespaceOptions {
  folder: string;
  /** Told when a snapshot could not be used. */
  notice: (message: string) => void;
  /** Hears every manifest read from the folder, the first included. */
  onManifest: (manifest: Manifest) => void;
}

export class Namespace {
  readonly folder: string;
  readonly #notice: (message: string) => void;
  readonly #onManifest: (manifest: Manifest) => void;
  #manifest: Manifest;
  #contents: Contents = emptyContents();
  #log: LogPosition | undefined;

  private constructor(options: NamespaceOptions, manifest: Manifest) {
    this.folder = options.folder;
    this.#notice = options.notice;
    this.#onManifest = options.onManifest;
    this.#manifest = manifest;
  }

  /** Opens the namespace in `folder` (nothing there yet is an empty one). Damaged files throw MemoryDamaged. */
  static async open(options: NamespaceOptions): Promise<Namespace> {
    const manifest = await readManifest(options.folder);
    options.onManifest(manifest);
    const namespace = new Namespace(options, manifest);
    await namespace.#load();
    return namespace;
  }

  get manifest(): Manifest {
    return this.#manifest;
  }

  /** What the indexes hold; changed only through this namespace. */
  get contents(): Contents {
    return this.#contents;
  }

  /** Where the log was read up to; undefined while there is none. */
  get log(): LogPosition | undefined {
    return this.#log;
  }

  /** Records of the log the snapshot does not hold. */
  unsaved(): number {
    const log = this.#log;
    if (!log) return 0;
    const snapshot = this.#manifest.snapshot;
    return log.records - (snapshot?.logId === log.id ? snapshot.records : 0);
  }

  /**
   * Reads what other processes appended since; a log replaced by a compaction is read again whole. What
   * is read is the file whose inode, size and header were just checked.
   */
  async catchUp(): Promise<void> {
    const file = await openLog(this.folder);
    const log = this.#log;
    if (!file) {
      if (log) await this.#reload();
      return;
    }
    try {
      if (!log || !(await sameLog(file, log))) return await this.#reload();
      if (file.size === log.bytes) return;
      const { records, position } = await readAppended(this.folder, file, log);
      // Another process's first vectors: the manifest now has their shape, without which they are not read.
      if (this.#manifest.dimensions === undefined && records.some((record) => hasVectorField(record)))
        return await this.#reload();
      for (const record of records) this.#apply(record);
      this.#log = position;
    } finally {
      await file.handle.close();
    }
  }

  /** Runs `work` holding the namespace's lock, after reading what other writers changed. */
  async write<T>(work: () => Promise<T>): Promise<T> {
    await mkdir(this.folder, { recursive: true });
    return withLock(this.folder, async () => {
      // What this writes starts from the manifest as the last writer left it: its snapshot, its shape.
      const manifest = await readManifest(this.folder);
      const { dimensions, model } = this.#manifest;
      if (manifest.dimensions !== dimensions || manifest.model !== model) await this.#reload();
      else this.#manifest = manifest;
      await this.catchUp();
      return work();
    });
  }

  /** Appends records to the log, flushed, then applies them. Under the lock (`write`). */
  async append(records: LogRecord[]): Promise<void> {
    if (records.length === 0) return;
    const log = this.#log ?? (await this.#startLog());
    // The shape first: a reader that sees these records must find the dimensions they have.
    if (this.#manifest.dimensions === undefined) await this.#setShapeFrom(records);
    const position = await appendRecords(this.folder, log, records);
    for (const record of records) this.#apply(record);
    this.#log = position;
  }

  /**
   * Writes a log of the live memories only (with `vectors`, new ones, when reindexing), its snapshot,
   * then swaps it in and names it in the manifest. A kill before the swap leaves the old log and
   * manifest; after it, the manifest's snapshot names the old log, so the new one is read whole. Under
   * the lock (`write`).
   */
  async compact(vectors?: Map<string, number[]>): Promise<void> {
    const records = liveRecords(this.#contents, this.#manifest, vectors);
    const log = await writeNewLog(this.folder, records);
    this.#contents = emptyContents();
    for (const record of records) this.#apply(record);
    this.#log = await log.swapIn();
    await this.snapshot();
  }

  /**
   * Rewrites the namespace with every memory's new vector (`vectors`, of `embedded`'s dimensions and
   * model; none when there are no memories). Under the lock (`write`).
   */
  async reembed(
    vectors: Map<string, number[]>,
    embedded: { dimensions: number; model: string } | undefined,
  ): Promise<void> {
    const { snapshot: _old, dimensions: _d, model: _m, ...rest } = this.#manifest;
    this.#manifest = { ...rest, ...embedded };
    await this.compact(vectors);
  }

  /** Saves both indexes under new names, then the manifest naming them, then removes older ones. */
  async snapshot(): Promise<void> {
    const snapshot = await writeSnapshot(this.folder, this.#log!, this.#contents);
    this.#manifest = { ...this.#manifest, snapshot };
    await writeManifest(this.folder, this.#manifest);
    await removeUnnamed(this.folder, snapshot);
  }

  /**
   * Reads the log, from the snapshot when it is usable, else whole. The snapshot's files are opened
   * first, right after the manifest was read: once open, a writer that replaces them cannot take them
   * away. One already gone was replaced a moment before: the manifest is read again for the new one.
   */
  async #load(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const opened = await openSnapshot(this.folder, this.#manifest.snapshot);
      try {
        if (opened instanceof SnapshotGone && attempt < SNAPSHOT_ATTEMPTS) {
          this.#setManifest(await readManifest(this.folder));
          continue;
        }
        return await this.#loadWith(opened);
      } finally {
        await closeSnapshot(opened);
      }
    }
  }

  /** The log, read with the snapshot's files (`opened`, or why they cannot be used) when they fit it. */
  async #loadWith(opened: OpenSnapshot | IndexFileRejected | undefined): Promise<void> {
    const file = await openLog(this.folder);
    if (!file) {
      this.#contents = emptyContents();
      this.#log = undefined;
      return;
    }
    const { records, position } = await readLog(this.folder, file);
    const snapshot = this.#manifest.snapshot;
    let contents: Contents | undefined;
    let from = 0;
    if (opened && snapshot && snapshot.logId === position.id && snapshot.records <= records.length) {
      contents = await loadSnapshot(
        this.folder,
        this.#manifest,
        records.slice(0, snapshot.records),
        opened,
      ).catch((error: unknown) => {
        if (!(error instanceof IndexFileRejected)) throw error;
        this.#notice(
          `memory in ${this.folder}: the saved index was not used (${error.message}); rebuilt from the log`,
        );
        return undefined;
      });
      if (contents) from = snapshot.records;
    }
    this.#contents = contents ?? emptyContents();
    for (const record of records.slice(from)) this.#apply(record);
    this.#log = position;
  }

  async #reload(): Promise<void> {
    this.#setManifest(await readManifest(this.folder));
    await this.#load();
  }

  #setManifest(manifest: Manifest): void {
    this.#manifest = manifest;
    this.#onManifest(manifest);
  }

  #apply(record: LogRecord): void {
    if (record.op === 'add' && this.#contents.items.has(record.id))
      throw logDamaged(this.folder, `the id ${record.id} is added twice`);
    applyRecord(this.#contents, record, this.#manifest);
  }

  /** A new, empty log; the manifest is written first, so it is there for the log. */
  async #startLog(): Promise<LogPosition> {
    await writeManifest(this.folder, this.#manifest);
    return startLog(this.folder);
  }

  /** The first vector fixes the namespace's dimensions and model. */
  async #setShapeFrom(records: LogRecord[]): Promise<void> {
    const first = records.find(
      (record): record is AddRecord => record.op === 'add' && record.vector !== undefined,
    );
    if (!first) return;
    const dimensions = Buffer.from(first.vector!, 'base64').length / 4;
    this.#manifest = { ...this.#manifest, dimensions, model: first.model! };
    await writeManifest(this.folder, this.#manifest);
  }
}

function hasVectorField(record: LogRecord): boolean {
  return record.op === 'add' && record.vector !== undefined;
}
