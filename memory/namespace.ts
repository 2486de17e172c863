/**
 * A namespace's folder as this process last read it: the manifest, the contents of the indexes and
 * where the log was read up to. It opens the namespace (from the snapshot when it is usable, else the
 * log whole), catches up with what other processes appended, and makes every change to the folder
 * under its lock (lock.ts): appending records, compacting the log, saving a snapshot. What to change,
 * and when, is the store's (store.ts).
 *
 * The snapshot's vectors file, the namespace's largest, is read when something first needs it (a
 * search by meaning, a write): opening for a search by words, a list or stats never reads it. It is
 * opened again then, and used only if it is still the file the snapshot names.
 *
 * A kill at any moment leaves a readable namespace: a cut last log line is ignored; a snapshot or a
 * compaction cut short is never named by the manifest.
 */
import { mkdir } from 'node:fs/promises';
import { applyRecord, emptyContents, liveRecords, withoutVectors, type Contents } from './contents.js';
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
import type { AddRecord, HeldVectors, LogRecord } from './records.js';
import {
  closeSnapshot,
  loadSnapshot,
  openSnapshot,
  removeUnnamed,
  SnapshotGone,
  writeSnapshot,
  type OpenSnapshot,
  type SnapshotFiles,
} from './snapshot.js';
import { IndexFileRejected, type VectorIndex } from './vector-index.js';

/**
 * Times a reader reads the manifest again when the snapshot it names was replaced before its files
 * could be opened (a writer removes the old ones right after naming new ones), before rebuilding.
 */
const SNAPSHOT_ATTEMPTS = 5;

/** Contents loaded from a snapshot, and the first record of the log they do not hold. */
interface Loaded {
  contents: Contents;
  from: number;
  /** Loads their vectors index, when the open left it for later. */
  loadVectors: (() => Promise<void>) | undefined;
}

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
  /**
   * The snapshot's vectors index, left for the first call that needs it (a search by meaning, a
   * write): opening for a search by words, a list or stats, never reads that largest file.
   */
  #loadVectors: (() => Promise<void>) | undefined;
  #vectorsLoading: Promise<void> | undefined;

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

  /** What the indexes hold; changed only through this namespace. Its vectors: `vectors()`. */
  get contents(): Contents {
    return this.#contents;
  }

  /** Whether it holds a vectors index, loaded or left for later. */
  get mayHaveVectors(): boolean {
    return this.#contents.vectors !== undefined || this.#loadVectors !== undefined;
  }

  /** The vectors index, loaded now if the open left it for later. */
  async vectors(): Promise<VectorIndex | undefined> {
    await this.#vectorsReady();
    return this.#contents.vectors;
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
      if (records.some((record) => hasVectorField(record))) {
        await this.#vectorsReady();
        // Loading them may have read the namespace again (a rejected file): these records included.
        if (this.#log !== log) return;
      }
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
      // Every change may touch the vectors index: appending, compacting, saving it.
      await this.#vectorsReady();
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

  /**
   * Saves both indexes under new names; then swaps in the log rewritten without the vectors the new
   * index file holds, its header naming that file (records.ts); then the manifest naming both files;
   * then removes older ones. A kill before the swap leaves the old log and manifest; after it, the log
   * names its vectors file itself, and is read with it while the manifest still names an older
   * snapshot. Under the lock (`write`).
   */
  async snapshot(): Promise<void> {
    let log = this.#log!;
    let snapshot = await writeSnapshot(this.folder, log, this.#contents);
    if (snapshot.vectors) {
      log = await this.#withoutVectors({ ...snapshot.vectors, records: log.records });
      snapshot = { ...snapshot, logId: log.id, logBytes: log.bytes };
      this.#log = log;
    }
    this.#manifest = { ...this.#manifest, snapshot };
    await writeManifest(this.folder, this.#manifest);
    await removeUnnamed(this.folder, snapshot, log.vectors);
  }

  /** Swaps in the log, read again, without the vectors `vectors` holds. */
  async #withoutVectors(vectors: HeldVectors): Promise<LogPosition> {
    const file = await openLog(this.folder);
    if (!file) throw logDamaged(this.folder, 'it was removed while a snapshot was being written');
    const { records, position } = await readLog(this.folder, file);
    // Under the lock and caught up: only a process that ignores the lock makes them differ.
    if (position.id !== this.#log!.id || records.length !== vectors.records)
      throw logDamaged(this.folder, 'it was changed by another process while a snapshot was being written');
    return (await writeNewLog(this.folder, withoutVectors(records), vectors)).swapIn();
  }

  /**
   * Reads the log, from the snapshot when it is usable, else whole. The snapshot's files are opened
   * first, right after the manifest was read: once open, a writer that replaces them cannot take them
   * away. One already gone was replaced a moment before: the manifest is read again for the new one.
   */
  async #load(eager = false): Promise<void> {
    this.#loadVectors = undefined;
    for (let attempt = 1; ; attempt++) {
      const opened = await openSnapshot(this.folder, this.#manifest.snapshot);
      const last = attempt >= SNAPSHOT_ATTEMPTS;
      try {
        if (!(opened instanceof SnapshotGone && !last) && (await this.#loadWith(opened, last, eager))) return;
      } finally {
        await closeSnapshot(opened);
      }
      this.#setManifest(await readManifest(this.folder));
    }
  }

  /**
   * The log, read with the snapshot's files (`opened`, or why they cannot be used) when they fit it,
   * else with the vectors file its header names. False when that file was replaced before it could be
   * opened (unless `last`): the manifest names the new one by now. Unless `eager`, the snapshot's
   * vectors index is left for later when no record after it has a vector (they would go into it).
   */
  async #loadWith(
    opened: OpenSnapshot | IndexFileRejected | undefined,
    last: boolean,
    eager: boolean,
  ): Promise<boolean> {
    const file = await openLog(this.folder);
    if (!file) {
      this.#contents = emptyContents();
      this.#log = undefined;
      return true;
    }
    const { records, position } = await readLog(this.folder, file);
    const snapshot = this.#manifest.snapshot;
    let loaded: Loaded | IndexFileRejected | undefined;
    if (opened && snapshot && snapshot.logId === position.id && snapshot.records <= records.length) {
      const defer = !eager && !records.slice(snapshot.records).some((record) => hasVectorField(record));
      loaded = await this.#fromSnapshot(records, snapshot.records, opened, snapshot, defer);
    }
    const rejected = loaded instanceof IndexFileRejected ? loaded : undefined;
    const held = position.vectors;
    if ((!loaded || rejected) && held && held.records <= records.length) {
      // A snapshot of an older log (a writer swapped in this one and is naming it), or one that was
      // rejected: the log's own vectors file holds its first records' only vectors.
      const own = await openSnapshot(this.folder, { vectors: held });
      try {
        if (own instanceof SnapshotGone && !last) return false;
        // Never undefined: it is given a file to open.
        loaded = await this.#fromSnapshot(records, held.records, own!, { vectors: held }, false);
      } finally {
        await closeSnapshot(own);
      }
    }
    const why = (rejected ?? (loaded instanceof IndexFileRejected ? loaded : undefined))?.message;
    if (loaded instanceof IndexFileRejected && held)
      this.#notice(
        `memory in ${this.folder}: the saved index was not used (${why}); rebuilt from the log, without ` +
          `the vectors only it held: those memories are found by words alone until \`meta-agent memory reindex\``,
      );
    else if (rejected || loaded instanceof IndexFileRejected)
      this.#notice(`memory in ${this.folder}: the saved index was not used (${why}); rebuilt from the log`);
    const usable = loaded instanceof IndexFileRejected ? undefined : loaded;
    this.#contents = usable?.contents ?? emptyContents();
    this.#loadVectors = usable?.loadVectors;
    for (const record of records.slice(usable?.from ?? 0)) this.#apply(record);
    this.#log = position;
    return true;
  }

  /**
   * The contents of the log's first `count` records from the files `opened`, or why they cannot be;
   * with `deferVectors`, their vectors index is left for later (loadSnapshot).
   */
  async #fromSnapshot(
    records: readonly LogRecord[],
    count: number,
    opened: OpenSnapshot | IndexFileRejected,
    files: SnapshotFiles,
    deferVectors: boolean,
  ): Promise<Loaded | IndexFileRejected> {
    try {
      const { contents, loadVectors } = await loadSnapshot(
        this.folder,
        this.#manifest,
        records.slice(0, count),
        opened,
        files,
        deferVectors,
      );
      return { contents, from: count, loadVectors };
    } catch (error) {
      if (error instanceof IndexFileRejected) return error;
      throw error;
    }
  }

  async #reload(eager = false): Promise<void> {
    this.#setManifest(await readManifest(this.folder));
    await this.#load(eager);
  }

  /** Loads the vectors index the open left for later, once however many calls wait for it. */
  async #vectorsReady(): Promise<void> {
    while (this.#loadVectors) {
      this.#vectorsLoading ??= this.#loadLeftVectors(this.#loadVectors).finally(() => {
        this.#vectorsLoading = undefined;
      });
      await this.#vectorsLoading;
    }
  }

  async #loadLeftVectors(load: () => Promise<void>): Promise<void> {
    try {
      await load();
      if (this.#loadVectors === load) this.#loadVectors = undefined;
    } catch (error) {
      if (!(error instanceof IndexFileRejected)) throw error;
      // Not the file the snapshot names, or replaced since: the namespace is read again, its vectors
      // at once, as an open does when it cannot use a snapshot (the notice, the rebuild from the log).
      await this.#reload(true);
    }
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
