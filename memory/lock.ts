/**
 * One writer at a time per namespace, across processes: a run, a `memory add` in another terminal and
 * an autogram may share one. The lock is a file made with O_EXCL holding the writer's PID; a lock whose
 * process is gone (killed mid-write) is taken over at once rather than after a timeout, which is why
 * this is not a lock library's mtime-based lock. Readers never lock: they read whole log lines only.
 */
import { lstat, open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { MemoryDamaged, openRegular, readRange, UnusableFile, type OpenFile } from './files.js';
import { isProcessAlive } from '../src/process-alive.js';

export const LOCK_FILE = 'lock';

/** How long a writer waits for another before giving up. */
export const LOCK_WAIT_MS = 10_000;

/** A lock file still empty after this was left by a writer that died as it made it. */
const EMPTY_LOCK_MS = 1_000;

/** Another live process kept the namespace locked for longer than LOCK_WAIT_MS. */
export class NamespaceBusy extends Error {
  readonly pid: number;
  constructor(pid: number) {
    super(`process ${pid} is writing to it`);
    this.pid = pid;
  }
}

export async function withLock<T>(folder: string, work: () => Promise<T>, waitMs = LOCK_WAIT_MS): Promise<T> {
  const path = join(folder, LOCK_FILE);
  const deadline = Date.now() + waitMs;
  for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
    const holder = await tryLock(path);
    if (holder === undefined) break;
    if (Date.now() > deadline) throw new NamespaceBusy(holder);
    await sleep(pause);
  }
  try {
    return await work();
  } finally {
    await unlink(path).catch(() => undefined);
  }
}

/** Takes the lock, or says which live process holds it. */
async function tryLock(path: string): Promise<number | undefined> {
  try {
    const handle = await open(path, 'wx');
    await handle.writeFile(`${process.pid}\n`);
    await handle.close();
    return undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const lock = await readLock(path);
  if (lock === undefined) return tryLock(path);
  const pid = Number.parseInt(lock.text, 10);
  // A lock file just made and not yet written reads empty: its maker is alive, unless it stays empty.
  if (!Number.isInteger(pid)) {
    if (Date.now() - lock.mtimeMs < EMPTY_LOCK_MS) return 0;
  } else if (isProcessAlive(pid)) return pid;
  // Only the file judged stale: its holder may have let go, and another taken the lock, meanwhile.
  if ((await lstat(path).catch(() => undefined))?.ino === lock.inode)
    await unlink(path).catch(() => undefined);
  return tryLock(path);
}

/**
 * The start of the lock file (a PID is all it holds), when it was written and which file it is, or
 * undefined when it is gone. Read without blocking: a FIFO put there would hold every writer forever.
 */
async function readLock(path: string): Promise<{ text: string; mtimeMs: number; inode: number } | undefined> {
  let file: OpenFile | undefined;
  try {
    file = await openRegular(path, Number.MAX_SAFE_INTEGER);
  } catch (error) {
    if (error instanceof UnusableFile)
      throw new MemoryDamaged(`${path} is not a lock file: ${error.message} (remove it)`);
    throw error;
  }
  if (!file) return undefined;
  try {
    const { mtimeMs } = await file.handle.stat();
    return { text: (await readRange(file, 0, 32)).toString('utf8'), mtimeMs, inode: file.inode };
  } finally {
    await file.handle.close();
  }
}
