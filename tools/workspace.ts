/**
 * The run's file jail. Every path the model names is relative to the workspace root; its text is
 * checked first (workspace-path.ts), then it is resolved, symlink by symlink, each of which must stay
 * inside the root and out of the reserved `.meta-agent` folder, which holds the run's own state and
 * allow rules. Files are created with O_NOFOLLOW (and O_EXCL for temporary files), so a symlink
 * swapped in after the check is not followed out; the folders above a file are checked, not held
 * open, since Node has no openat(2). A file with other hard links is never written through: `write`
 * renames a new file over it and `append` appends to a copy renamed over it, so a hard link to a file
 * outside the workspace changes nothing there. Reading one is allowed: the agent has no way to make a
 * hard link, so one in the workspace is a file the user put there, as readable as a copy would be.
 *
 * Messages are written for the model, which is told them and goes on: they name paths relative to the
 * workspace, never the host's, and say what to do instead.
 */
import { constants, type Stats } from 'node:fs';
import {
  type FileHandle,
  lstat,
  mkdir,
  open,
  readdir,
  realpath,
  rename,
  stat,
  unlink,
} from 'node:fs/promises';
import { dirname, join, relative as relativeTo, sep } from 'node:path';
import { removeStaleTemps, tempPathFor } from '../src/write-file.js';
import type { WorkspaceFiles } from './command.js';
import { JailError, RESERVED_FOLDER, isAcceptedPath, shownPath, workspacePath } from './workspace-path.js';

/** The largest file `read` returns. */
export const MAX_READ_BYTES = 1024 * 1024;
/** The most files `list` returns; past it, the list ends with LIST_NOTE. */
export const LIST_LIMIT = 1000;
/** The last entry of a list cut at LIST_LIMIT. It starts with "…", which no accepted path can hold. */
export const LIST_NOTE = `… more files not listed (the list stops at ${LIST_LIMIT}); search a subfolder to see them.`;

// Absent on Windows, where a symlink swapped in at the last moment cannot be refused this way.
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;
// A FIFO would block an open for reading until a writer came; with this it opens, and is refused.
const NO_BLOCK = constants.O_NONBLOCK ?? 0;

/** "1 byte", "12 bytes", "1,048,577 bytes". */
export function describeBytes(count: number): string {
  return `${count.toLocaleString('en-US')} ${count === 1 ? 'byte' : 'bytes'}`;
}

/** Where a checked path is on the disk, and what is there (undefined: nothing yet). */
interface Place {
  relative: string;
  real: string;
  stats: Stats | undefined;
}

type Action = 'read' | 'write' | 'append to' | 'delete' | 'list';

/** The run's workspace: a folder the agent's file commands cannot leave (see the top of this file). */
export class Workspace implements WorkspaceFiles {
  readonly #offLimits: readonly string[];

  private constructor(
    readonly root: string,
    offLimits: readonly string[],
  ) {
    this.#offLimits = offLimits;
  }

  /**
   * The workspace at `root`, created when missing; `root` is kept as its real path. `offLimits`: folders
   * that stay out of reach even when they lie inside it, such as the user's own configuration, which
   * holds the consent the agent must not grant itself.
   */
  static async open(root: string, options: { offLimits?: readonly string[] } = {}): Promise<Workspace> {
    await mkdir(root, { recursive: true });
    const offLimits = await Promise.all(
      (options.offLimits ?? []).map((folder) => realpath(folder).catch(() => folder)),
    );
    return new Workspace(await realpath(root), offLimits);
  }

  /** The text of a file, up to MAX_READ_BYTES; folders, binary files and devices are refused. */
  async read(file: string): Promise<string> {
    const data = await this.#readData('read', file, MAX_READ_BYTES);
    if (data.includes(0)) throw failure('read', workspacePath(file), 'it is a binary file, not text');
    return data.toString('utf8');
  }

  /** The bytes of a file (an image, a recording), up to `maxBytes`; folders and devices are refused. */
  readBytes(file: string, maxBytes: number): Promise<Uint8Array> {
    return this.#readData('read', file, maxBytes);
  }

  #readData(action: Action, file: string, maxBytes: number): Promise<Buffer> {
    return this.#act(action, file, { follow: true }, async (place) => {
      this.#mustBeFile(action, place);
      const handle = await open(place.real, constants.O_RDONLY | NO_FOLLOW | NO_BLOCK);
      try {
        const stats = await handle.stat();
        this.#mustBeFile(action, { ...place, stats });
        if (stats.size > maxBytes)
          throw failure(
            action,
            place.relative,
            `it is ${sizeOf(stats.size)}, and files over ${describeMiB(maxBytes)} cannot be read`,
          );
        return await handle.readFile();
      } finally {
        await handle.close();
      }
    });
  }

  /**
   * Replaces (or creates) a file, creating its folders: the text goes to a temporary file beside it,
   * renamed over it, so the file is never half written. A symlink (inside) keeps pointing at the file.
   */
  write(file: string, data: string | Uint8Array): Promise<void> {
    return this.#act('write', file, { follow: true }, async (place) => {
      if (place.stats) this.#mustBeFile('write', place);
      await mkdir(dirname(place.real), { recursive: true });
      await replace(place.real, place.stats, (handle) => handle.writeFile(data));
    });
  }

  /**
   * Adds text at the end of a file, creating it (and its folders) when missing. A file with other hard
   * links is copied first, the copy with the text renamed over it, as `write` replaces it: the link
   * may lead to a file outside the workspace (a pnpm store, a file the user linked in), which must not
   * change. The link count is read on the opened file (fstat), so it is the count of the very file
   * that would be appended to, not of whatever a path named a moment before.
   */
  append(file: string, text: string): Promise<void> {
    return this.#act('append to', file, { follow: true }, async (place) => {
      if (place.stats) this.#mustBeFile('append to', place);
      await mkdir(dirname(place.real), { recursive: true });
      const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | NO_FOLLOW | NO_BLOCK;
      const handle = await open(place.real, flags, 0o666);
      let linked: boolean;
      try {
        const stats = await handle.stat();
        this.#mustBeFile('append to', { ...place, stats });
        linked = stats.nlink > 1;
        if (!linked) await handle.appendFile(text);
      } finally {
        await handle.close();
      }
      if (linked) await this.#appendToCopy(place, text);
    });
  }

  /** Appends to a copy of the file at `place`, renamed over it: the file's other links keep the old text. */
  async #appendToCopy(place: Place, text: string): Promise<void> {
    const source = await open(place.real, constants.O_RDONLY | NO_FOLLOW | NO_BLOCK);
    try {
      const stats = await source.stat();
      this.#mustBeFile('append to', { ...place, stats });
      await replace(place.real, stats, async (target) => {
        await copyAll(source, target);
        await target.writeFile(text);
      });
    } finally {
      await source.close();
    }
  }

  /** Deletes a file; a symlink is removed itself, not what it points to. Folders are refused. */
  remove(file: string): Promise<void> {
    return this.#act('delete', file, { follow: false }, async (place) => {
      if (!place.stats) throw failure('delete', place.relative, 'there is no such file in the workspace');
      if (place.stats.isDirectory())
        throw failure('delete', place.relative, 'it is a folder, and only files can be deleted');
      await unlink(place.real);
    });
  }

  /**
   * The files under `directory` ("." or "" for the whole workspace), recursively, as paths relative to
   * the root, sorted folder by folder. Symlinks are listed only when they lead to a file inside the
   * workspace, and never descended into; `.meta-agent` and names the jail would refuse are left out.
   * At most LIST_LIMIT paths, then LIST_NOTE when there were more.
   */
  list(directory: string): Promise<string[]> {
    return this.#act('list', directory, { follow: true, root: true }, async (place) => {
      if (!place.stats) throw failure('list', place.relative, 'there is no such folder in the workspace');
      if (!place.stats.isDirectory()) throw failure('list', place.relative, 'it is a file, not a folder');
      const found: string[] = [];
      const cut = await this.#walk(place.real, place.relative, found);
      return cut ? [...found.slice(0, LIST_LIMIT), LIST_NOTE] : found;
    });
  }

  /** Checks `path`, locates it, and runs `body`; file-system errors become messages for the model. */
  async #act<T>(
    action: Action,
    path: string,
    options: { follow: boolean; root?: boolean },
    body: (place: Place) => Promise<T>,
  ): Promise<T> {
    const relative = workspacePath(path, { root: options.root });
    try {
      const place = await this.#locate(action, path, relative, options.follow);
      if (this.#isOffLimits(place.real))
        throw new JailError(
          `The path ${shownPath(path)} is in a folder of the user's own settings, which the agent cannot reach; use another folder.`,
          path,
        );
      return await body(place);
    } catch (error) {
      throw explain(error, action, relative);
    }
  }

  /**
   * Resolves `relative` name by name. Each symlink on the way must lead inside the root and outside
   * `.meta-agent`; the last one is followed only when `follow` is set (else it is the thing acted on).
   */
  async #locate(action: Action, path: string, relative: string, follow: boolean): Promise<Place> {
    const names = relative === '.' ? [] : relative.split('/');
    let real = this.root;
    let stats: Stats | undefined = await stat(real);
    for (const [index, name] of names.entries()) {
      if (!stats.isDirectory())
        throw failure(action, relative, `"${names.slice(0, index).join('/')}" is a file, not a folder`);
      const next = join(real, name);
      stats = await lstat(next).catch(ifMissing);
      if (stats === undefined) return { relative, real: join(next, ...names.slice(index + 1)), stats };
      if (!stats.isSymbolicLink()) {
        real = next;
        continue;
      }
      const target = await this.#follow(next, names.slice(0, index + 1).join('/'), path);
      const last = index === names.length - 1;
      if (last && !follow) return { relative, real: next, stats };
      real = target;
      stats = await stat(real);
    }
    return { relative, real, stats };
  }

  /** Where the symlink `link` leads, refused unless that is inside the workspace (and not reserved). */
  async #follow(link: string, linkRelative: string, path: string): Promise<string> {
    const through = `goes through the symbolic link "${linkRelative}", which`;
    let target: string;
    try {
      target = await realpath(link);
    } catch (error) {
      if (!['ENOENT', 'ELOOP'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
      throw new JailError(
        `The path ${shownPath(path)} ${through} leads nowhere (its target is missing, or it loops); use another path.`,
        path,
      );
    }
    if (!this.#contains(target))
      throw new JailError(
        `The path ${shownPath(path)} ${through} leads outside the workspace; files outside the workspace cannot be reached.`,
        path,
      );
    if (this.#reserved(target))
      throw new JailError(
        `The path ${shownPath(path)} ${through} leads into ${RESERVED_FOLDER}, where the run keeps its own state; use another folder.`,
        path,
      );
    return target;
  }

  /** Adds the files under `folder` to `found`, in order; true when it stopped past LIST_LIMIT. */
  async #walk(folder: string, relative: string, found: string[]): Promise<boolean> {
    const entries = await readdir(folder, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const path = relative === '.' ? entry.name : `${relative}/${entry.name}`;
      if (!isAcceptedPath(path)) continue;
      const full = join(folder, entry.name);
      if (this.#isOffLimits(full)) continue;
      if (entry.isDirectory()) {
        if (await this.#walk(full, path, found)) return true;
        continue;
      }
      if (entry.isFile() || (entry.isSymbolicLink() && (await this.#leadsToFile(full)))) found.push(path);
      if (found.length > LIST_LIMIT) return true;
    }
    return false;
  }

  async #leadsToFile(link: string): Promise<boolean> {
    const target = await realpath(link).catch(() => undefined);
    if (
      target === undefined ||
      !this.#contains(target) ||
      this.#reserved(target) ||
      this.#isOffLimits(target)
    )
      return false;
    return (await stat(target)).isFile();
  }

  #contains(real: string): boolean {
    return real === this.root || real.startsWith(this.root.endsWith(sep) ? this.root : this.root + sep);
  }

  #isOffLimits(real: string): boolean {
    return this.#offLimits.some((folder) => real === folder || real.startsWith(folder + sep));
  }

  #reserved(real: string): boolean {
    return relativeTo(this.root, real).split(sep)[0]?.toLowerCase() === RESERVED_FOLDER;
  }

  #mustBeFile(action: Action, place: Place): void {
    if (place.stats === undefined)
      throw failure(action, place.relative, 'there is no such file in the workspace');
    if (place.stats.isDirectory()) throw failure(action, place.relative, 'it is a folder, not a file');
    if (!place.stats.isFile())
      throw failure(action, place.relative, 'it is not a regular file (a device, pipe or socket)');
  }
}

/**
 * Fills a temporary file beside `real` with `fill`, gives it the old file's permissions, and renames it
 * over `real`, so the file is never half written and the old file's other hard links keep its text.
 */
async function replace(
  real: string,
  existing: Stats | undefined,
  fill: (handle: FileHandle) => Promise<void>,
): Promise<void> {
  await removeStaleTemps(real);
  const temp = tempPathFor(real);
  const mode = existing ? existing.mode & 0o777 : 0o666;
  try {
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NO_FOLLOW;
    const handle = await open(temp, flags, mode);
    try {
      // The mode given to open is cut by the umask; an existing file's is restored as it was.
      if (existing) await handle.chmod(mode);
      await fill(handle);
    } finally {
      await handle.close();
    }
    await rename(temp, real);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}

const COPY_CHUNK_BYTES = 64 * 1024;

/** Copies all of `source` to `target`'s position, in chunks: the file may be larger than memory allows. */
async function copyAll(source: FileHandle, target: FileHandle): Promise<void> {
  const buffer = Buffer.allocUnsafe(COPY_CHUNK_BYTES);
  for (let position = 0; ;) {
    const { bytesRead } = await source.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) return;
    await target.write(buffer, 0, bytesRead);
    position += bytesRead;
  }
}

function failure(action: Action, relative: string, reason: string): Error {
  return new Error(`Could not ${action} "${relative}": ${reason}.`);
}

const REASONS: Readonly<Record<string, string>> = {
  ENOENT: 'there is no such file or folder in the workspace',
  EISDIR: 'it is a folder, not a file',
  ENOTDIR: 'part of the path is a file, not a folder',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
  EROFS: 'the workspace is read-only',
  ELOOP: 'it became a symbolic link, which is not followed',
  ENAMETOOLONG: 'a name in it is too long for the file system',
  ENXIO: 'it is not a regular file (a device, pipe or socket)',
};

/** A file-system error as a message naming the workspace path, never the host's; others pass through. */
function explain(error: unknown, action: Action, relative: string): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code !== 'string') return error;
  return new Error(`Could not ${action} "${relative}": ${REASONS[code] ?? `the file system said ${code}`}.`, {
    cause: error,
  });
}

function ifMissing(error: unknown): undefined {
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
  throw error;
}

function sizeOf(bytes: number): string {
  return `${describeBytes(bytes)} (${(bytes / MIB).toFixed(1)} MiB)`;
}

const MIB = 1024 * 1024;

/** "1 MiB", "25 MiB", "0.5 MiB". */
function describeMiB(bytes: number): string {
  return `${Number((bytes / MIB).toFixed(1))} MiB`;
}
