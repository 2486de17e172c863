/**
 * The child's side of running a workspace program (child.ts serves the request): the files it is given
 * go into /workspace, a file system in the runtime's memory mounted afresh for the run, beside a fresh
 * /tmp; the Python runner runs the program (program-runner-source.ts); then /workspace is compared with
 * what was given, and what differs goes back within the request's caps. Both mounts are dropped after,
 * so nothing of one run (its files, or a code node's) is there for the next.
 *
 * Like child.ts, this file may import only Node's builtins: it runs in the contained child.
 */
import { Buffer } from 'node:buffer';
import { posix } from 'node:path';
import type { LeftOut, ProgramFile, ProgramRan, ProgramRequest } from './protocol.js';

const WORKSPACE = '/workspace';
/** Folders a program may write that start empty and are dropped after each run. */
const FRESH = [WORKSPACE, '/tmp'];
/** Devices and process files, not the runtime's files. */
const SPECIAL = ['/dev', '/proc'];
/** Files named as left out, at most; the others are counted. */
const MAX_LEFT_OUT = 100;

/** Emscripten's ENOSPC: Python sees OSError "No space left on device". */
const ENOSPC = 51;

/** What this file uses of Emscripten's in-memory file system. */
interface Memfs {
  /** The operations every file's streams share (each stream refers to this object). */
  ops_table: { file: { stream: { write: StreamWrite } } };
  resizeFileStorage: (node: MemfsNode, size: number) => void;
}

type StreamWrite = (
  stream: { node: MemfsNode },
  buffer: unknown,
  offset: number,
  length: number,
  position: number,
  canOwn?: boolean,
) => number;

interface MemfsNode {
  usedBytes: number;
}

/** What this file uses of Emscripten's file system (Pyodide's `FS`). */
export interface ProgramFs {
  filesystems: { MEMFS: Memfs };
  ErrnoError: new (errno: number) => Error;
  mount(type: unknown, options: object, mountpoint: string): unknown;
  unmount(mountpoint: string): void;
  mkdirTree(path: string): void;
  analyzePath(path: string): { exists: boolean };
  writeFile(path: string, data: Uint8Array): void;
  readFile(path: string): Uint8Array;
  readdir(path: string): string[];
  lstat(path: string): { mode: number; size: number; ino: number; mtime: unknown };
  isDir(mode: number): boolean;
  isFile(mode: number): boolean;
  isLink(mode: number): boolean;
}

/**
 * Runs the program of `request` with `run` (the Python runner) and collects what it changed; or, when
 * the runtime's own files are no longer `loaded` (what `runtimeFiles` said when it loaded: a code node
 * wrote there), runs nothing and answers 'stale', for the parent to start a new runtime.
 */
export function runProgram(
  fs: ProgramFs,
  request: ProgramRequest,
  run: (path: string, outputBytes: number) => string,
  loaded: string,
): Omit<ProgramRan, 'logs'> | 'stale' {
  if (runtimeFiles(fs) !== loaded) return 'stale';
  for (const folder of FRESH) {
    if (!fs.analyzePath(folder).exists) fs.mkdirTree(folder);
    fs.mount(fs.filesystems.MEMFS, {}, folder);
  }
  try {
    const given = new Map<string, Buffer>();
    for (const file of request.files) {
      const data = Buffer.from(file.data, 'base64');
      const full = `${WORKSPACE}/${file.path}`;
      fs.mkdirTree(posix.dirname(full));
      fs.writeFile(full, data);
      given.set(file.path, data);
    }
    const unlimit = limitFileBytes(fs, request.memoryMb * 1024 * 1024);
    let answer: string;
    try {
      answer = run(request.path, request.outputBytes);
    } finally {
      unlimit();
    }
    return { answer, ...changes(fs, given, request), restart: runtimeFiles(fs) !== loaded };
  } finally {
    for (const folder of FRESH) fs.unmount(folder);
  }
}

/**
 * Caps the bytes files may grow by, in all, until the returned function is called. Files in the
 * runtime's memory are JavaScript memory, which the WebAssembly cap does not reach: without this a
 * program writing /tmp in a loop would take the host's memory in seconds. Past the cap a write fails
 * with ENOSPC. Every growth goes through the write of MEMFS's file streams or its resize (truncate), both looked up
 * at each call.
 */
function limitFileBytes(fs: ProgramFs, bytes: number): () => void {
  const memfs = fs.filesystems.MEMFS;
  const streams = memfs.ops_table.file.stream;
  const { write } = streams;
  const { resizeFileStorage } = memfs;
  let room = bytes;
  const take = (node: MemfsNode, size: number) => {
    const growth = size - node.usedBytes;
    if (growth <= 0) return;
    if (growth > room) throw new fs.ErrnoError(ENOSPC);
    room -= growth;
  };
  streams.write = (stream, buffer, offset, length, position, canOwn) => {
    take(stream.node, position + length);
    return write(stream, buffer, offset, length, position, canOwn);
  };
  memfs.resizeFileStorage = (node, size) => {
    take(node, size);
    resizeFileStorage(node, size);
  };
  return () => {
    streams.write = write;
    memfs.resizeFileStorage = resizeFileStorage;
  };
}

/**
 * What the runtime's own files are (the standard library's zip, its folders), outside /workspace and
 * /tmp: a program that wrote there left something a later evaluation could meet, and one that finds
 * them changed would meet what an evaluation left; either way the runtime is started anew.
 */
export function runtimeFiles(fs: ProgramFs): string {
  const entries: string[] = [];
  const folders = ['/'];
  for (let folder = folders.pop(); folder !== undefined; folder = folders.pop())
    for (const name of fs.readdir(folder)) {
      if (name === '.' || name === '..') continue;
      const path = folder === '/' ? `/${name}` : `${folder}/${name}`;
      if (FRESH.includes(path) || SPECIAL.includes(path)) continue;
      const { ino, mode, size, mtime } = fs.lstat(path);
      entries.push(`${path}\0${ino}\0${mode}\0${size}\0${String(mtime)}`);
      if (fs.isDir(mode)) folders.push(path);
    }
  return entries.sort().join('\n');
}

/** The files of /workspace that differ from `given`, within the caps, and those of `given` that are gone. */
function changes(
  fs: ProgramFs,
  given: ReadonlyMap<string, Buffer>,
  request: ProgramRequest,
): Omit<ProgramRan, 'answer' | 'logs' | 'restart'> {
  const files: ProgramFile[] = [];
  const leftOut: LeftOut[] = [];
  let moreLeftOut = 0;
  const leave = (path: string, reason: string) => {
    if (leftOut.length < MAX_LEFT_OUT) leftOut.push({ path, reason });
    else moreLeftOut++;
  };
  const present = new Set<string>();
  let bytes = 0;
  // A folder stack, not recursion: a program may nest folders deeper than the JavaScript stack goes.
  const folders = [''];
  for (let folder = folders.pop(); folder !== undefined; folder = folders.pop()) {
    const names = fs
      .readdir(folder === '' ? WORKSPACE : `${WORKSPACE}/${folder}`)
      .filter((name) => name !== '.' && name !== '..')
      .sort();
    for (const name of names) {
      const path = folder === '' ? name : `${folder}/${name}`;
      const full = `${WORKSPACE}/${path}`;
      const { mode, size } = fs.lstat(full);
      if (fs.isDir(mode)) {
        folders.push(path);
        continue;
      }
      if (!fs.isFile(mode)) {
        leave(
          path,
          fs.isLink(mode) ? 'it is a symbolic link; only files come back' : 'it is not a regular file',
        );
        continue;
      }
      const before = given.get(path);
      if (before !== undefined) present.add(path);
      if (before !== undefined && before.length === size && before.equals(fs.readFile(full))) continue;
      if (files.length >= request.maxFilesOut)
        leave(path, `more than ${request.maxFilesOut} files were made or changed`);
      else if (bytes + size > request.maxBytesOut)
        leave(path, `the files made or changed pass ${request.maxBytesOut} bytes in all`);
      else {
        const data = fs.readFile(full);
        files.push({ path, data: Buffer.from(data.buffer, data.byteOffset, data.length).toString('base64') });
        bytes += size;
      }
    }
  }
  const deleted = [...given.keys()].filter((path) => !present.has(path));
  return { files, deleted, leftOut, moreLeftOut };
}
