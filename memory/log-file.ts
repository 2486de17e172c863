/**
 * The log file of a namespace, `items.jsonl` (its lines: records.ts), on disk: opened without trusting
 * the folder (files.ts), read whole or from where it was read up to, appended to, started, and
 * replaced by a compacted one. A position in it says which file it is, so a log replaced by another
 * process is noticed before it is read as if it were the same.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  MemoryDamaged,
  openRegular,
  readAll,
  readRange,
  UnusableFile,
  writeDurable,
  type OpenFile,
} from './files.js';
import {
  headerLine,
  LogDamaged,
  parseHeader,
  parseRecords,
  recordLine,
  type HeldVectors,
  type LogRecord,
} from './records.js';

export const LOG_FILE = 'items.jsonl';

/** A temporary log a compaction wrote and, killed, never renamed into place. */
export const TEMP_LOG_FILE = /^\.items\.jsonl\.[0-9a-f]+\.tmp$/;

/**
 * The largest log read (it is read whole): as large as Node's readFile ever read. A namespace's other
 * files are bounded by it: the manifest is a few lines, a snapshot file holds what the log does.
 */
const MAX_LOG_BYTES = 2 ** 31 - 1;

/** Appending to the log: never through a symlink, nor blocking on a FIFO (0 where a platform lacks one). */
const APPEND_FLAGS =
  constants.O_WRONLY | constants.O_APPEND | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** Where the log was read up to. */
export interface LogPosition {
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
  /** Where the vectors of its first records are, when not in them (format 2, records.ts). */
  vectors?: HeldVectors;
}

/** The log of the namespace in `folder` cannot be read; `reason` says why. */
export function logDamaged(folder: string, reason: string): MemoryDamaged {
  return new MemoryDamaged(`${join(folder, LOG_FILE)} cannot be read: ${reason}`);
}

/** The log, open, or undefined when there is none yet; one that is not a regular file is damage. */
export async function openLog(folder: string): Promise<OpenFile | undefined> {
  try {
    return await openRegular(join(folder, LOG_FILE), MAX_LOG_BYTES);
  } catch (error) {
    if (error instanceof UnusableFile) throw logDamaged(folder, error.message);
    throw error;
  }
}

/** The whole log in `file` (closed after): its records, and the position after the last whole one. */
export async function readLog(
  folder: string,
  file: OpenFile,
): Promise<{ records: LogRecord[]; position: LogPosition }> {
  let bytes: Buffer;
  try {
    bytes = await readAll(file);
  } finally {
    await file.handle.close();
  }
  const headerEnd = bytes.indexOf(0x0a) + 1;
  if (headerEnd === 0) throw logDamaged(folder, 'its log has no header line');
  const header = parsing(folder, () => parseHeader(bytes.toString('utf8', 0, headerEnd - 1)));
  const read = parsing(folder, () => parseRecords(bytes.subarray(headerEnd), headerEnd, 2));
  return {
    records: read.records,
    position: {
      id: header.id,
      bytes: read.bytes,
      records: read.records.length,
      inode: file.inode,
      header: Buffer.from(bytes.subarray(0, headerEnd)),
      ...(header.vectors && { vectors: header.vectors }),
    },
  };
}

/** Whether `file` is still the log read up to `log`, grown or not. */
export async function sameLog(file: OpenFile, log: LogPosition): Promise<boolean> {
  if (file.inode !== log.inode || file.size < log.bytes) return false;
  return (await readRange(file, 0, log.header.length)).equals(log.header);
}

/** The records `file` (the log read up to `log`) has gained since, and the position after them. */
export async function readAppended(
  folder: string,
  file: OpenFile,
  log: LogPosition,
): Promise<{ records: LogRecord[]; position: LogPosition }> {
  const chunk = await readRange(file, log.bytes, file.size);
  const { records, bytes } = parsing(folder, () => parseRecords(chunk, log.bytes, log.records + 2));
  return { records, position: { ...log, bytes, records: log.records + records.length } };
}

/** Appends `records` to the log read up to `log`, flushed; the position after them. */
export async function appendRecords(
  folder: string,
  log: LogPosition,
  records: readonly LogRecord[],
): Promise<LogPosition> {
  const path = join(folder, LOG_FILE);
  const text = records.map(recordLine).join('');
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
  return { ...log, bytes: log.bytes + Buffer.byteLength(text), records: log.records + records.length };
}

/** A new, empty log with a header, where there is none. */
export async function startLog(folder: string): Promise<LogPosition> {
  const id = randomBytes(8).toString('hex');
  const header = headerLine(id);
  const handle = await open(join(folder, LOG_FILE), 'wx');
  try {
    await handle.writeFile(header);
    await handle.sync();
    const bytes = Buffer.from(header);
    return { id, bytes: bytes.length, records: 0, inode: (await handle.stat()).ino, header: bytes };
  } finally {
    await handle.close();
  }
}

/**
 * Writes a new log of `records` beside the log, its header naming where `vectors` says the vectors of
 * its first records are, flushed; `swapIn` renames it over the log and gives its position. Until then,
 * the log is as it was.
 */
export async function writeNewLog(
  folder: string,
  records: readonly LogRecord[],
  vectors?: HeldVectors,
): Promise<{ swapIn(): Promise<LogPosition> }> {
  const id = randomBytes(8).toString('hex');
  const header = headerLine(id, vectors);
  const text = header + records.map(recordLine).join('');
  const path = join(folder, LOG_FILE);
  const temp = join(folder, `.${LOG_FILE}.${randomBytes(4).toString('hex')}.tmp`);
  await writeDurable(temp, text);
  return {
    async swapIn() {
      await rename(temp, path);
      return {
        id,
        bytes: Buffer.byteLength(text),
        records: records.length,
        inode: (await stat(path)).ino,
        header: Buffer.from(header),
        ...(vectors && { vectors }),
      };
    },
  };
}

function parsing<T>(folder: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof LogDamaged) throw logDamaged(folder, `its log ${error.message}`);
    throw error;
  }
}
