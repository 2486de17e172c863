/**
 * What callers open as long-term memory, whichever holds it: a namespace's folder of files (store.ts,
 * one machine) or its rows in PostgreSQL (postgres.ts, shared by every worker). Both keep the same
 * memories, search them with the same fusion (fusion.ts) and follow the same rule for embedders: the
 * first vectors fix a namespace's model and dimensions, and an embedder of another model or shape makes
 * search go by words alone until `reindex` embeds everything again.
 */
import type { Item } from './contents.js';
import type { Fused } from './fusion.js';

/** A memory: its id, text, metadata, when it was added and whether it has a vector. */
export type MemoryItem = Omit<Item, 'label'>;

export type MemoryHit = MemoryItem & Omit<Fused, 'id'>;

/** A namespace's figures in files: what `memory stats` shows of it. */
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

/** A namespace's figures in PostgreSQL: what `memory stats` shows of it. */
export interface DatabaseMemoryStats {
  /** The database's URL, its password hidden. */
  database: string;
  items: number;
  embedded: number;
  model?: string;
  dimensions?: number;
  /** Why search goes by words alone, when it does. */
  wordsOnly?: string;
}

export interface Memory {
  /** Adds a memory; returns its id. */
  add(text: string, meta?: Record<string, string>, signal?: AbortSignal): Promise<string>;
  /** Adds memories in order, embedding them in batches; `onProgress` hears how many are stored. */
  addMany(
    entries: ReadonlyArray<{ text: string; meta?: Record<string, string> }>,
    signal?: AbortSignal,
    onProgress?: (done: number, total: number) => void,
  ): Promise<string[]>;
  /** The `k` memories closest to `query`, by meaning and by words, closest first. */
  search(query: string, k: number, signal?: AbortSignal): Promise<MemoryHit[]>;
  /** Every memory, oldest first. */
  list(): Promise<MemoryItem[]>;
  /** Forgets the memories with these ids; returns the ids it held. */
  forget(ids: readonly string[]): Promise<string[]>;
  /** Forgets every memory whose text contains `text` (any case); returns their ids. */
  forgetMatching(text: string): Promise<string[]>;
  /** Embeds every memory again with the embedder; returns how many memories there are. */
  reindex(signal?: AbortSignal, onProgress?: (done: number, total: number) => void): Promise<number>;
  stats(): Promise<MemoryStats | DatabaseMemoryStats>;
  /** The namespaces beside this one (its own once it holds anything), sorted. */
  namespaces(): Promise<string[]>;
  /** Saves what is due and lets go of what the memory holds open. */
  close(): Promise<void>;
}
