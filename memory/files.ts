/**
 * Reading the files of a namespace's folder, which may not be ours (a shared folder, a checkout, an
 * archive). A file is opened once, without following a symlink and without blocking (a FIFO then opens
 * at once instead of waiting for a writer), and used only when that open file is a regular file of a
 * sensible size. Everything after works on that one open file: its bytes are read, hashed and handed to
 * hnswlib from it, so a rename or removal in the folder meanwhile cannot change what is read. A file
 * of ours is written whole and flushed before anything names it.
 */
import { constants, existsSync, type Stats } from 'node:fs';
import { lstat, open, type FileHandle } from 'node:fs/promises';

/** A namespace's files cannot be used; the message says which and why. */
export class MemoryDamaged extends Error {}

/** A path of the folder that is there but cannot be read as a file; the message says why. */
export class UnusableFile extends Error {}

/** An open regular file, as it was when opened. */
export interface OpenFile {
  handle: FileHandle;
  size: number;
  inode: number;
}

/** Where a platform lacks a flag (Windows), it is 0: the open is then as the platform does it. */
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** The most one read asks for: a single read(2) is capped below 2 GiB. */
const READ_CHUNK = 1 << 30;

/**
 * Opens the regular file at `path` for reading, or undefined when nothing is there. Throws UnusableFile
 * for a symlink, FIFO, device, socket or folder, or a file over `maxBytes`.
 */
export async function openRegular(path: string, maxBytes: number): Promise<OpenFile | undefined> {
  // lstat first: a device is never opened, since opening some of them does something.
  const before = await lstat(path).catch(missingAsUndefined);
  if (before === undefined) return undefined;
  if (!before.isFile()) throw new UnusableFile(`it is ${kindOf(before)}, not a regular file`);
  let handle: FileHandle;
  try {
    handle = await open(path, READ_FLAGS);
  } catch (error) {
    return openFailed(error);
  }
  try {
    const stats = await handle.stat();
    // Something else may have been put in its place after lstat.
    if (!stats.isFile()) throw new UnusableFile(`it is ${kindOf(stats)}, not a regular file`);
    if (stats.size > maxBytes) throw new UnusableFile(`it is larger than ${sizeName(maxBytes)}`);
    return { handle, size: stats.size, inode: stats.ino };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Bytes `start` to `end` of the file (fewer when it is shorter now). */
export async function readRange(file: OpenFile, start: number, end: number): Promise<Buffer> {
  const bytes = Buffer.alloc(Math.max(0, end - start));
  let filled = 0;
  while (filled < bytes.length) {
    const length = Math.min(bytes.length - filled, READ_CHUNK);
    const { bytesRead } = await file.handle.read(bytes, filled, length, start + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return bytes.subarray(0, filled);
}

/** The whole file, as long as it was when opened. */
export function readAll(file: OpenFile): Promise<Buffer> {
  return readRange(file, 0, file.size);
}

/** The regular file at `path` whole (see openRegular), or undefined when nothing is there. */
export async function readRegular(path: string, maxBytes: number): Promise<Buffer | undefined> {
  const file = await openRegular(path, maxBytes);
  if (!file) return undefined;
  try {
    return await readAll(file);
  } finally {
    await file.handle.close();
  }
}

/** Makes the file at `path` (never over one there) holding `text`, flushed to disk. */
export async function writeDurable(path: string, text: string | Buffer): Promise<void> {
  const handle = await open(path, 'wx');
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Flushes to disk the file a library wrote at `path` (hnswlib). */
export async function flush(path: string): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

const FD_FOLDER = ['/proc/self/fd', '/dev/fd'].find((folder) => existsSync(folder));

/**
 * A path that opens the very file `file` is, for a library that takes only a path (hnswlib): the open
 * file's entry under /proc/self/fd (or /dev/fd), which still leads to it after it was renamed or
 * removed. Where neither exists (Windows, which does not remove an open file), `path` itself.
 */
export function openFilePath(file: OpenFile, path: string): string {
  return FD_FOLDER === undefined ? path : `${FD_FOLDER}/${file.handle.fd}`;
}

function openFailed(error: unknown): undefined {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return undefined;
  // O_NOFOLLOW's answer to a symlink put there after lstat: ELOOP (Linux, macOS), EMLINK (FreeBSD).
  if (code === 'ELOOP' || code === 'EMLINK')
    throw new UnusableFile('it is a symbolic link, not a regular file');
  if (code === 'EACCES' || code === 'EPERM') throw new UnusableFile('it cannot be read (permission denied)');
  throw error;
}

function missingAsUndefined(error: unknown): undefined {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return undefined;
  if (code === 'ENOTDIR') throw new UnusableFile('its folder is not a folder');
  if (code === 'EACCES') throw new UnusableFile('it cannot be reached (permission denied)');
  throw error;
}

function kindOf(stats: Stats): string {
  if (stats.isSymbolicLink()) return 'a symbolic link';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isDirectory()) return 'a folder';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return 'something other than a file';
}

function sizeName(bytes: number): string {
  const gib = bytes / 2 ** 30;
  return gib >= 1 ? `${Number(gib.toFixed(1))} GiB` : `${Math.round(bytes / 2 ** 10)} KiB`;
}
