/**
 * What `meta-agent memory import` reads: a file of one memory a line, or JSONL where each line is
 * `{"text": "…", "meta": {…}}`. The format is decided per file, never per line, so a plain line that
 * happens to be JSON is not read as a record in one file and as text in another: a file is JSONL when
 * every line that is not blank is a JSON object; a mix is refused, naming a line of each kind.
 */
import { readFile } from 'node:fs/promises';
import { text as readStream } from 'node:stream/consumers';
import { InvalidFileError, UserError } from '../errors.js';
import { MAX_TEXT_CHARS } from '../../memory/store.js';

/** One memory to add, and the line of the file it came from (for messages and resuming). */
export interface ImportEntry {
  text: string;
  meta: Record<string, string>;
  line: number;
}

export interface ParsedImport {
  format: 'lines' | 'jsonl';
  entries: ImportEntry[];
}

/** The text of `file`, or of stdin for `-`. */
export async function readImport(file: string): Promise<string> {
  if (file === '-') return readStream(process.stdin);
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new UserError(`${file}: no such file`, 2);
    if (code === 'EISDIR') throw new UserError(`${file}: is a folder; import takes a text file`, 2);
    throw new UserError(`${file}: cannot read: ${(error as Error).message}`, 2);
  }
}

/** The memories in `text` (read from `source`); a line that cannot be used throws, naming it. */
export function parseImport(text: string, source: string): ParsedImport {
  if (text.includes('\0'))
    throw new InvalidFileError(
      `${source} is not text (it holds NUL bytes)`,
      'import takes one memory a line, or JSONL',
    );
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const entries: ImportEntry[] = [];
  let firstJson: number | undefined;
  let firstPlain: number | undefined;
  lines.forEach((line, index) => {
    const number = index + 1;
    if (line.trim() === '') return;
    const json = line.trimStart().startsWith('{');
    if (json) firstJson ??= number;
    else firstPlain ??= number;
    const entry = json ? jsonEntry(line, `${source}:${number}`) : { text: line, meta: {} };
    if (entry.text.length > MAX_TEXT_CHARS)
      throw new InvalidFileError(
        `${source}:${number}: a memory holds at most ${MAX_TEXT_CHARS.toLocaleString('en-US')} characters`,
      );
    entries.push({ ...entry, line: number });
  });
  if (firstJson !== undefined && firstPlain !== undefined)
    throw new InvalidFileError(
      `${source}: line ${firstJson} is JSON but line ${firstPlain} is not`,
      'a file is either one memory a line or JSONL ({"text": "…"} on every line)',
    );
  if (entries.length === 0) throw new InvalidFileError(`${source} holds no memories: every line is blank`);
  return { format: firstJson === undefined ? 'lines' : 'jsonl', entries };
}

/** A JSONL line's memory; `where` is `file:line`. */
function jsonEntry(line: string, where: string): { text: string; meta: Record<string, string> } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw new InvalidFileError(
      `${where}: not valid JSON (${(error as Error).message})`,
      'fix the line; in a file of one memory a line, no line may start with "{"',
    );
  }
  if (!isRecord(value) || typeof value.text !== 'string')
    throw new InvalidFileError(`${where}: a JSONL line needs "text", a string`);
  if (value.text.trim() === '') throw new InvalidFileError(`${where}: "text" is empty`);
  return { text: value.text, meta: metaOf(value.meta, where) };
}

/** A line's `meta`: labels whose values are strings (numbers and booleans are written as text). */
function metaOf(meta: unknown, where: string): Record<string, string> {
  if (meta === undefined || meta === null) return {};
  if (!isRecord(meta)) throw new InvalidFileError(`${where}: "meta" must be an object of labels`);
  const labels: Record<string, string> = {};
  for (const [key, value] of Object.entries(meta)) {
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
      throw new InvalidFileError(`${where}: meta.${key} must be a string, a number or true/false`);
    labels[key] = String(value);
  }
  return labels;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
