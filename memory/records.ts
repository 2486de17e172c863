/**
 * The memory log, `items.jsonl`: the one durable record of a namespace, appended one line per change.
 * The first line names the log (an id the manifest's snapshot refers to); then `add` and `forget`
 * records. Vectors travel as base64 float32 so the index can be rebuilt without the embedding server,
 * until a snapshot holds them: the log is then rewritten without them (format 2), its header naming the
 * snapshot's vectors file that holds them, so that no vector is on disk twice. Format 1 logs (every
 * vector in its record) are read as they are, and rewritten so at their first snapshot.
 * A line cut short by a crash (the last one, without its newline) is ignored; any other bad line means
 * the file was damaged or is not a memory log, and it is refused rather than half read.
 */
import { z } from 'zod';

export const LOG_FORMAT = 'meta-agent/memory-log@2';
/** Logs written before format 2: every vector in its record. */
const LOG_FORMAT_1 = 'meta-agent/memory-log@1';

/**
 * Where the vectors of a format 2 log's first `records` records are: an index file of the folder (a
 * snapshot's, named as the manifest names them), with its size and digest. Their add records keep
 * their `model` and leave out `vector`.
 */
const heldVectorsSchema = z.strictObject({
  file: z.string().regex(/^vectors-[0-9a-f]{1,64}\.hnsw$/, 'a vectors-HEX.hnsw file of the same folder'),
  bytes: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  records: z.number().int().nonnegative(),
});

export type HeldVectors = z.infer<typeof heldVectorsSchema>;

const headerSchema = z.strictObject({
  op: z.literal('log'),
  format: z.union([z.literal(LOG_FORMAT), z.literal(LOG_FORMAT_1)]),
  id: z.string().min(1),
  vectors: heldVectorsSchema.optional(),
});

/** An add record: a memory, with its vector (or, for a held vector, its model alone: HeldVectors). */
export interface AddRecord {
  op: 'add';
  id: string;
  text: string;
  meta: Record<string, string>;
  at: string;
  /** The embedding model that made `vector` (or the held vector: HeldVectors); `vector` not without it. */
  model?: string;
  vector?: string;
}

export interface ForgetRecord {
  op: 'forget';
  id: string;
}

export type LogRecord = AddRecord | ForgetRecord;
export type LogHeader = z.infer<typeof headerSchema>;

/** The most characters a memory's id may have. */
const MAX_ID_CHARS = 64;

/** The fields an add record may have: any other makes the line no record. */
const ADD_FIELDS = new Set(['op', 'id', 'text', 'meta', 'at', 'model', 'vector']);

/**
 * `value` (a parsed log line) as a record, or undefined when it is not one. Checked by hand rather than
 * by a schema: it runs once per line of a log of 100,000 lines at every open, where zod was most of the
 * parse. Exactly the shapes above, no field more or less.
 */
export function asRecord(value: unknown): LogRecord | undefined {
  if (!isObject(value)) return undefined;
  if (value.op === 'forget') {
    const { id } = value;
    if (typeof id !== 'string' || id.length === 0) return undefined;
    for (const key in value) if (key !== 'op' && key !== 'id') return undefined;
    return value as unknown as ForgetRecord;
  }
  if (value.op !== 'add') return undefined;
  const { id, text, meta, at, model, vector } = value;
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_CHARS) return undefined;
  if (typeof text !== 'string' || typeof at !== 'string' || !isStringMap(meta)) return undefined;
  if (!optionalString(value, 'model', model) || !optionalString(value, 'vector', vector)) return undefined;
  for (const key in value) if (!ADD_FIELDS.has(key)) return undefined;
  return value as unknown as AddRecord;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStringMap(value: unknown): value is Record<string, string> {
  if (!isObject(value)) return false;
  for (const key in value) if (typeof value[key] !== 'string') return false;
  return true;
}

/** A field that is absent, or a string. */
function optionalString(record: Record<string, unknown>, key: string, value: unknown): boolean {
  return typeof value === 'string' || !Object.hasOwn(record, key);
}

export function headerLine(id: string, vectors?: HeldVectors): string {
  const header: LogHeader = { op: 'log', format: LOG_FORMAT, id, ...(vectors && { vectors }) };
  return `${JSON.stringify(header)}\n`;
}

export function recordLine(record: LogRecord): string {
  return `${JSON.stringify(record)}\n`;
}

/** What a stretch of the log holds. */
export interface ParsedLog {
  records: LogRecord[];
  /** Bytes read up to the end of the last whole line: where the next record goes. */
  bytes: number;
}

/** A log that cannot be read as one: damaged, or another kind of file. */
export class LogDamaged extends Error {}

/** The header of a whole log, read from its first line. */
export function parseHeader(firstLine: string): LogHeader {
  const parsed = headerSchema.safeParse(safeJson(firstLine));
  if (!parsed.success) throw new LogDamaged('starts without a memory log header');
  return parsed.data;
}

/**
 * The whole lines of `chunk` (read from a log at byte `start`, after its header) as records. A last
 * line without its newline is left for later: a crash cut it, or a writer is still writing it.
 */
export function parseRecords(chunk: Buffer, start: number, firstLineNumber: number): ParsedLog {
  const end = chunk.lastIndexOf(0x0a) + 1;
  const records: LogRecord[] = [];
  let lineNumber = firstLineNumber;
  let from = 0;
  while (from < end) {
    const newline = chunk.indexOf(0x0a, from);
    const line = chunk.toString('utf8', from, newline);
    from = newline + 1;
    const number = lineNumber++;
    if (line.trim() === '') continue;
    const record = asRecord(safeJson(line));
    if (!record) throw new LogDamaged(`line ${number} is not a memory record`);
    records.push(record);
  }
  return { records, bytes: start + end };
}

function safeJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

export function encodeVector(vector: readonly number[]): string {
  return Buffer.from(new Float32Array(vector).buffer).toString('base64');
}

/** The vector of a record, or undefined when it is not `dimensions` finite numbers. */
export function decodeVector(base64: string, dimensions: number): number[] | undefined {
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.length !== dimensions * 4) return undefined;
  const vector = Array.from({ length: dimensions }, (_, index) => bytes.readFloatLE(index * 4));
  return vector.every(Number.isFinite) ? vector : undefined;
}
