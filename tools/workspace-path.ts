/**
 * The text of a path the model names, checked before anything touches the disk, in AutoGPT forge's
 * order (`_sanitize_path`): NUL bytes first, then the path's text: no `..`, no absolute or Windows
 * paths, no control, invisible or look-alike characters, nothing in the reserved `.meta-agent` folder.
 * Resolving what is left, symlink by symlink, is the workspace's (workspace.ts). Messages are written
 * for the model: they say what to do instead.
 */

/** The folder at the root where the run keeps its saved state and allow rules. */
export const RESERVED_FOLDER = '.meta-agent';
/** The longest path accepted, in UTF-8 bytes (Linux's PATH_MAX). */
export const MAX_PATH_BYTES = 4096;

/** A path refused because it would leave the workspace or reach what it must not; the run goes on. */
export class JailError extends Error {
  override readonly name = 'JailError';

  /** `path` is the path as the model gave it. */
  constructor(
    message: string,
    readonly path: string,
  ) {
    super(message);
  }
}

/**
 * Characters that look like `/`, `\` or `.` and that NFKC leaves as they are (from Unicode's
 * confusables.txt; real letters of a script are left out). Those NFKC folds are refused by that test.
 */
const LOOK_ALIKES: ReadonlyMap<string, string> = new Map([
  ...[...'\u1735\u2041\u2044\u2215\u2571\u27cb\u29f8\u3033\u31d3\u{1d23a}'].map((c) => [c, '/'] as const),
  ...[...'\u2216\u2572\u27cd\u29f5\u29f9\u31d4'].map((c) => [c, '\\'] as const),
  ...[...'\u0701\u0702\ua4f8\ua60e\u{10a50}\u{1d16d}'].map((c) => [c, '.'] as const),
]);

/** Zero-width, joiner, variation and text-direction characters: a name holding one is not what it shows. */
const INVISIBLE: ReadonlyArray<readonly [number, number]> = [
  [0x00ad, 0x00ad],
  [0x034f, 0x034f],
  [0x061c, 0x061c],
  [0x180e, 0x180e],
  [0x200b, 0x200f],
  [0x202a, 0x202e],
  [0x2060, 0x2064],
  [0x2066, 0x206f],
  [0xfe00, 0xfe0f],
  [0xfeff, 0xfeff],
];

/**
 * The workspace-relative form of `path` ("notes/todo.txt", or "." for the root when `root` allows it),
 * or a JailError saying why the path is refused. Looks at the text only; `Workspace` then resolves it.
 */
export function workspacePath(path: string, options: { root?: boolean } = {}): string {
  const refuse = (problem: string) => new JailError(`The path ${shownPath(path)} ${problem}.`, path);
  if (path.includes('\0')) throw refuse('contains a NUL byte, which no file name can hold');
  const size = Buffer.byteLength(path);
  if (size > MAX_PATH_BYTES) throw refuse(`is ${size} bytes long; paths may have at most ${MAX_PATH_BYTES}`);
  for (const char of path) {
    const code = char.codePointAt(0) ?? 0;
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f))
      throw refuse(
        `contains the control character ${codePoint(char)}; name the file with printable characters`,
      );
    if (invisible(code))
      throw refuse(
        `contains the invisible or text-direction character ${codePoint(char)}; type the name without it`,
      );
    const like = LOOK_ALIKES.get(char) ?? char.normalize('NFKC');
    if (like !== char)
      throw refuse(
        `contains ${codePoint(char)} "${char}", which ${LOOK_ALIKES.has(char) ? 'looks like' : 'Unicode normalization turns into'} "${like}"; write the name in plain characters (folders are separated by "/")`,
      );
  }
  if (path.normalize('NFKC') !== path)
    throw refuse('is not in Unicode normal form (NFKC); write its accented letters as single characters');
  if (path.includes('\\'))
    throw refuse('contains a backslash; separate folders with "/", as in "notes/todo.txt"');
  if (path.startsWith('/'))
    throw refuse('is absolute; name files relative to the workspace, as in "notes/todo.txt"');
  if (path.startsWith('~'))
    throw refuse(
      'starts with "~" (a home folder); name files relative to the workspace, as in "notes/todo.txt"',
    );
  if (/^[a-z]:/i.test(path))
    throw refuse('starts with a drive letter; name files relative to the workspace, as in "notes/todo.txt"');
  const names = path.split('/');
  if (names.includes('..')) throw refuse(`contains "..", which is not allowed; ${instead(names)}`);
  const kept = names.filter((name) => name !== '' && name !== '.');
  if (kept.length === 0) {
    if (options.root) return '.';
    throw refuse(
      path === ''
        ? 'is empty; name a file, as in "notes/todo.txt"'
        : 'names the workspace itself, not a file in it',
    );
  }
  if (kept[0]?.toLowerCase() === RESERVED_FOLDER)
    throw refuse(`is in ${RESERVED_FOLDER}, where the run keeps its own state; use another folder`);
  return kept.join('/');
}

/** True when the jail would accept `path`: names it refuses are not listed, since they cannot be used. */
export function isAcceptedPath(path: string): boolean {
  try {
    workspacePath(path);
    return true;
  } catch {
    return false;
  }
}

/** What the model can write instead of a path with "..": its plain form when that stays inside. */
function instead(names: string[]): string {
  const kept: string[] = [];
  for (const name of names) {
    if (name === '..') {
      if (kept.pop() === undefined) return 'files outside the workspace cannot be reached';
    } else if (name !== '' && name !== '.') kept.push(name);
  }
  return kept.length > 0
    ? `write "${kept.join('/')}" instead`
    : 'name files from the workspace root, as in "notes/todo.txt"';
}

function codePoint(char: string): string {
  return `U+${hex(char).toUpperCase()}`;
}

function hex(char: string): string {
  return (char.codePointAt(0) ?? 0).toString(16).padStart(4, '0');
}

function invisible(code: number): boolean {
  return INVISIBLE.some(([first, last]) => code >= first && code <= last);
}

/** `path` quoted for a message: escapes control and invisible characters, and cuts a long one short. */
export function shownPath(path: string): string {
  const chars = [...path];
  const cut = chars.length > 120 ? `${chars.slice(0, 100).join('')}…` : path;
  return [...JSON.stringify(cut)]
    .map((char) => (invisible(char.codePointAt(0) ?? 0) ? `\\u${hex(char)}` : char))
    .join('');
}
