/**
 * What a namespace holds in this process: its memories by id, numbered by labels (the log's add records
 * in order), in the vectors index (vector-index.ts) and the words index (word-index.ts), and how the
 * log's records change them. In memory only: the files are the namespace's (namespace.ts).
 */
import type { Manifest } from './manifest.js';
import { decodeVector, encodeVector, type AddRecord, type LogRecord } from './records.js';
import { VectorIndex } from './vector-index.js';
import { WordIndex } from './word-index.js';

/** A memory as the indexes hold it: `label` numbers it in them. */
export interface Item {
  id: string;
  text: string;
  meta: Record<string, string>;
  /** When it was added, ISO 8601. */
  at: string;
  /** Whether it has a vector (else only its words find it). */
  embedded: boolean;
  label: number;
}

/** What the indexes hold: rebuilt whole, or brought up to date record by record. */
export interface Contents {
  items: Map<string, Item>;
  /** The id of each label (labels number the log's add records in order). */
  ids: string[];
  /** Labels of forgotten memories still in the log. */
  forgotten: Set<number>;
  nextLabel: number;
  vectors: VectorIndex | undefined;
  words: WordIndex;
}

export function emptyContents(): Contents {
  return {
    items: new Map(),
    ids: [],
    forgotten: new Set(),
    nextLabel: 0,
    vectors: undefined,
    words: WordIndex.create(),
  };
}

/** Applies a record of the log; an add's id is new (the caller checked). */
export function applyRecord(contents: Contents, record: LogRecord, manifest: Manifest): void {
  if (record.op === 'forget') {
    const item = contents.items.get(record.id);
    if (!item) return;
    contents.items.delete(record.id);
    contents.forgotten.add(item.label);
    contents.words.remove(item.id);
    if (item.embedded) contents.vectors?.remove(item.label);
    return;
  }
  const label = contents.nextLabel++;
  const { dimensions } = manifest;
  const vector =
    hasVector(record, manifest) && dimensions !== undefined
      ? decodeVector(record.vector!, dimensions)
      : undefined;
  contents.items.set(record.id, itemOf(record, label, vector !== undefined));
  contents.ids[label] = record.id;
  contents.words.add(record.id, record.text);
  if (vector) {
    contents.vectors ??= VectorIndex.create({ dimensions: dimensions!, ...indexShape(manifest) });
    contents.vectors.add(label, vector);
  }
}

/**
 * The items and labels `records` make, without their indexes (a snapshot's files hold those), and the
 * labels that have a vector, forgotten or not.
 */
export function labelRecords(
  records: readonly LogRecord[],
  manifest: Manifest,
): { contents: Contents; vectorLabels: number[] } {
  const contents = emptyContents();
  const vectorLabels: number[] = [];
  for (const record of records) {
    if (record.op === 'add') {
      const label = contents.nextLabel++;
      // The vectors themselves are in the index file: only whether the record has one matters here.
      const embedded = hasVector(record, manifest) || hasHeldVector(record, manifest);
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
  return { contents, vectorLabels };
}

/**
 * An add record for each live memory, oldest first: its vector from `vectors` when given (a reindex's),
 * else the one it has, of the manifest's model.
 */
export function liveRecords(
  contents: Contents,
  manifest: Manifest,
  vectors?: Map<string, number[]>,
): AddRecord[] {
  return [...contents.items.values()].map((item): AddRecord => {
    const vector = vectors
      ? vectors.get(item.id)
      : item.embedded
        ? contents.vectors!.vector(item.label)
        : undefined;
    return {
      op: 'add',
      id: item.id,
      text: item.text,
      meta: item.meta,
      at: item.at,
      ...(vector && { model: manifest.model!, vector: encodeVector(vector) }),
    };
  });
}

/** Whether a record has a vector of the namespace's model and dimensions (its numbers not yet read). */
export function hasVector(record: AddRecord, manifest: Manifest): boolean {
  const { model, dimensions } = manifest;
  return (
    record.vector !== undefined &&
    record.model === model &&
    dimensions !== undefined &&
    record.vector.length === Math.ceil((dimensions * 4) / 3) * 4
  );
}

/** Whether a record's vector, of the namespace's model, is in the index file its log names (records.ts). */
function hasHeldVector(record: AddRecord, manifest: Manifest): boolean {
  return record.vector === undefined && record.model !== undefined && record.model === manifest.model;
}

/** `records` without their vectors, which an index file holds from now on (records.ts). */
export function withoutVectors(records: readonly LogRecord[]): LogRecord[] {
  return records.map((record) => {
    if (record.op !== 'add' || record.vector === undefined) return record;
    const { vector: _vector, ...rest } = record;
    return rest;
  });
}

/** The hnswlib parameters the manifest fixes. */
export function indexShape(manifest: Manifest): { m: number; efConstruction: number } {
  return { m: manifest.m, efConstruction: manifest.efConstruction };
}

/** The memory as the store's callers see it. */
export function publicItem({ label: _label, ...item }: Item): Omit<Item, 'label'> {
  return item;
}

function itemOf(record: AddRecord, label: number, embedded: boolean): Item {
  return { id: record.id, text: record.text, meta: record.meta, at: record.at, embedded, label };
}
