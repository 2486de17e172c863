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

const metaSchema = z.record(z.string(), z.string());

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

const addSchema = z.strictObject({
  op: z.literal('add'),
  id: z.string().min(1).max(64),
  text: z.string(),
  meta: metaSchema,
  at: z.string(),
  /** The embedding model that made `vector` (or the held vector: HeldVectors); `vector` not without it. */
  model: z.string().optional(),
  vector: z.string().optional(),
});

const forgetSchema = z.strictObject({ op: z.literal('forget'), id: z.string().min(1) });

const recordSchema = z.discriminatedUnion('op', [addSchema, forgetSchema]);

export type LogHeader = z.infer<typeof headerSchema>;
export type AddRecord = z.infer<typeof addSchema>;
export type LogRecord = z.infer<typeof recordSchema>;

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
    const parsed = recordSchema.safeParse(safeJson(line));
    if (!parsed.success) throw new LogDamaged(`line ${number} is not a memory record`);
    records.push(parsed.data);
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
