/**
 * Writing a file the way a user means it. A regular file (or a path with nothing there yet) is replaced
 * atomically: the text goes to a temporary file beside it, which takes the old file's permissions (and
 * owner, when we are root), and is renamed over it, so readers never see half a file. A symlink is
 * followed and the file it points to is replaced, so the link stays a link. Anything else (a FIFO, a
 * terminal, `/dev/null`, `/dev/stdout`) is written through, as the shell's `>` would, and never replaced
 * by a regular file; `/dev/stdout` and `/dev/stderr` are this process's own streams. Each atomic write
 * also removes the temporary files earlier writers of the same target left behind when they crashed.
 */
import { constants, type Stats } from 'node:fs';
import {
  lstat,
  open,
  readdir,
  readlink,
  realpath,
  rename,
  stat,
  unlink,
  type FileHandle,
} from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { isProcessAlive } from './process-alive.js';
import { nodeCrypto } from './lazy-crypto.js';

/** How `writeTextFile` writes. */
export interface WriteOptions {
  /** Flush the data and the rename to the disk before returning, so a crash cannot lose or empty the file. */
  durable?: boolean;
  /**
   * This process has removed the target's stale temporary files already, and is its only writer: the
   * folder listing that looks for them, which grows with the folder, is skipped.
   */
  tempsRemoved?: boolean;
}

/** A temporary file older than this is stale even when a process of its PID is running (PIDs are reused). */
export const STALE_TEMP_MS = 60 * 60 * 1000;

/** Symlinks followed before giving up, as the kernel's own limit (ELOOP). */
const MAX_LINKS = 40;

/**
 * Writes `text` to `path` (see the top of this file). Errors are the file system's, with the target's
 * kind said plainly for a folder or a socket; callers add what they were saving.
 */
export async function writeTextFile(path: string, text: string, options: WriteOptions = {}): Promise<void> {
  const target = await locate(path);
  if (target.kind === 'through') return writeThrough(path, text);
  if (target.kind === 'stream') return writeStream(target.stream, text);
  if (target.kind === 'refused') throw new Error(target.reason);
  await replaceAtomically(target.path, text, target.stats, options);
}

/**
 * Replaces whatever is at `path` (a file, a symlink, a hard link, a FIFO) with a new regular file holding
 * `text`, renamed over it, never writing through it. For our own files in folders that may not be
 * ours alone (a memory namespace, the model cache), where a link planted in a file's place must not
 * lead the write elsewhere; `writeTextFile` is for a user's paths, where a link stays a link.
 */
export async function replaceFile(path: string, text: string, options: WriteOptions = {}): Promise<void> {
  await replaceAtomically(path, text, undefined, options);
}

/** The temporary file a write of `target` uses: hidden, beside it, naming the writer's PID. */
export function tempPathFor(target: string): string {
  const suffix = nodeCrypto().randomBytes(4).toString('hex');
  return join(dirname(target), `.${basename(target)}.${process.pid}.${suffix}.tmp`);
}

type Target =
  | { kind: 'file'; path: string; stats?: Stats }
  | { kind: 'through' }
  | { kind: 'stream'; stream: NodeJS.WriteStream }
  | { kind: 'refused'; reason: string };

/** What writing to `path` means: which regular file to replace, or to write through what is there. */
async function locate(path: string): Promise<Target> {
  let current = path;
  for (let hops = 0; hops <= MAX_LINKS; hops++) {
    const stats = await lstat(current).catch(missing);
    if (stats === undefined) return { kind: 'file', path: current };
    if (stats.isSymbolicLink()) {
      const folder = await realpath(dirname(current));
      // A link in /proc (where /dev/stdout and /dev/fd/N lead) names an open file, not a path: a pipe, a
      // terminal, or a file the shell opened for appending. Only writing through it is right; our own
      // stdout and stderr are written as streams, since they can be sockets, which cannot be opened.
      if (folder === `/proc/${process.pid}/fd` && ['1', '2'].includes(basename(current)))
        return { kind: 'stream', stream: basename(current) === '1' ? process.stdout : process.stderr };
      if (folder.startsWith('/proc/')) return classify(await stat(path));
      const link = await readlink(current);
      current = isAbsolute(link) ? link : resolve(folder, link);
      continue;
    }
    return stats.isFile() ? { kind: 'file', path: current, stats } : classify(stats);
  }
  throw Object.assign(new Error(`too many symbolic links on the way to ${path}`), { code: 'ELOOP' });
}

function classify(stats: Stats): Target {
  if (stats.isDirectory()) return { kind: 'refused', reason: 'is a folder' };
  if (stats.isSocket()) return { kind: 'refused', reason: 'is a socket, which cannot be written as a file' };
  return { kind: 'through' };
}

/**
 * Writes into what is already there (a FIFO, a device, a file behind a /proc link): opened for writing
 * without creating or truncating anything, appending, as a pipe or `>>` would.
 */
async function writeThrough(path: string, text: string): Promise<void> {
  const handle = await open(path, constants.O_WRONLY | constants.O_APPEND);
  try {
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
}

function writeStream(stream: NodeJS.WriteStream, text: string): Promise<void> {
  return new Promise((done, fail) => stream.write(text, (error) => (error ? fail(error) : done())));
}

async function replaceAtomically(
  path: string,
  text: string,
  existing: Stats | undefined,
  options: WriteOptions,
): Promise<void> {
  if (!options.tempsRemoved) await removeStaleTemps(path);
  const temp = tempPathFor(path);
  try {
    const handle = await open(temp, 'wx', existing ? existing.mode & 0o7777 : 0o666);
    try {
      if (existing) await keepOwnerAndMode(handle, existing);
      await handle.writeFile(text);
      // Without this the rename can reach the disk before the data, and a crash would leave an empty file.
      if (options.durable) await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !(await exists(dirname(path))))
      throw new Error(`the folder ${dirname(path)} does not exist`, { cause: error });
    throw error;
  }
  if (options.durable) await syncFolder(dirname(path));
}

/** The new file gets the old one's owner (only root can give a file away) and permissions, which umask cut. */
async function keepOwnerAndMode(handle: FileHandle, existing: Stats): Promise<void> {
  if (process.getuid?.() === 0 && (existing.uid !== 0 || existing.gid !== 0))
    await handle.chown(existing.uid, existing.gid).catch(() => undefined);
  // After chown, which clears set-user-ID bits.
  await handle.chmod(existing.mode & 0o7777);
}

/**
 * Removes `.NAME.PID.HEX.tmp` files beside `path` that a crashed writer left: their process is gone, or
 * they are older than STALE_TEMP_MS. One folder listing; best effort, since this write does not need it.
 */
export async function removeStaleTemps(path: string, now = Date.now()): Promise<string[]> {
  const folder = dirname(path);
  const prefix = `.${basename(path)}.`;
  const removed: string[] = [];
  let names: string[];
  try {
    names = await readdir(folder);
  } catch {
    return removed;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const match = /^(\d+)\.[0-9a-f]{8}\.tmp$/.exec(name.slice(prefix.length));
    if (!match) continue;
    const temp = join(folder, name);
    const pid = Number(match[1]);
    try {
      const gone = pid !== process.pid && !isProcessAlive(pid);
      if (!gone && now - (await lstat(temp)).mtimeMs < STALE_TEMP_MS) continue;
      await unlink(temp);
      removed.push(temp);
    } catch {
      // Another writer may have renamed or removed it meanwhile.
    }
  }
  return removed;
}

/** Makes a rename durable. Some platforms cannot open a folder for syncing; that only costs durability. */
async function syncFolder(folder: string): Promise<void> {
  try {
    const handle = await open(folder, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Best effort by design: the file is already whole on disk, only the rename's durability is at stake.
  }
}

function missing(error: unknown): undefined {
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
  throw error;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
