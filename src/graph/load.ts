/**
 * Reading and writing graph files. The extension picks the format: `.autogram.json` / `.json` (native,
 * checked against the zod schema) or `.csv` (AutoGRAMS spreadsheet). Writes are atomic for regular files
 * and write through FIFOs and devices (../write-file.ts).
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { InvalidFileError, UserError } from '../errors.js';
import { writeTextFile } from '../write-file.js';
import { schemaRefFor } from './json-schema.js';
import { describeJsonError, withoutBom } from './json-syntax.js';
import { summarizeIssues, unknownFieldWarnings } from './schema-issues.js';
import { graphFileSchema, type GraphFile } from './schema.js';
import { decodeSpreadsheet } from './spreadsheet-text.js';

/** A graph file as read, with what the reader could not carry over (ignored columns, unknown fields). */
export interface LoadedGraph {
  file: GraphFile;
  warnings: string[];
}

/** The format a path is read and written in, decided by its extension. */
export function graphFormatOf(path: string): 'json' | 'csv' {
  const lower = path.toLowerCase();
  if (lower.endsWith('.csv')) return 'csv';
  if (lower.endsWith('.json')) return 'json';
  throw new UserError(
    `${path}: unknown graph file type`,
    2,
    'graph files end in .autogram.json (native) or .csv (AutoGRAMS spreadsheet)',
  );
}

/** The graph's name when the file does not give one: the file name without its extensions. */
export function graphNameFromPath(path: string): string {
  return basename(path).replace(/(\.autogram)?\.(json|csv)$/i, '');
}

/** Reads a graph file. Missing or unreadable files, bad JSON and invalid graphs become UserErrors. */
export async function loadGraphFile(path: string): Promise<LoadedGraph> {
  if (graphFormatOf(path) === 'csv') {
    const { text, warnings } = decodeSpreadsheet(await readFileBytes(path), path);
    // The CSV parser loads only for spreadsheets: most graph files are JSON.
    const { graphFromCsv } = await import('./csv.js');
    const loaded = graphFromCsv(text, { name: graphNameFromPath(path), source: path });
    return { file: loaded.file, warnings: [...warnings, ...loaded.warnings] };
  }
  return parseGraphJson(await readTextFile(path), path);
}

/** Parses the text of a native graph file; `source` names it in messages. */
export function parseGraphJson(text: string, source: string): LoadedGraph {
  return parseGraphObject(parseJsonText(text, source), source);
}

/**
 * JSON.parse with an InvalidFileError that names the file and the line and column of a syntax error.
 * A UTF-8 byte order mark, which some Windows editors write, is skipped.
 */
export function parseJsonText(text: string, source: string): unknown {
  text = withoutBom(text);
  if (text.trim() === '') throw new InvalidFileError(`${source}: the file is empty`);
  try {
    return JSON.parse(text);
  } catch (error) {
    const where = describeJsonError(text) ?? (error as Error).message;
    throw new InvalidFileError(`${source}: invalid JSON at ${where}`);
  }
}

/** Validates a parsed native graph (a file's JSON, or a snapshot's base graph). */
export function parseGraphObject(input: unknown, source: string): LoadedGraph {
  const named =
    input !== null && typeof input === 'object' && !('name' in input)
      ? { ...input, name: graphNameFromPath(source) }
      : input;
  const parsed = graphFileSchema.safeParse(named);
  if (!parsed.success)
    throw new InvalidFileError(
      `${source}: not a valid graph: ${summarizeIssues(parsed.error, named)}`,
      'run "meta-agent validate" on it after fixing, or see schema/autogram.schema.json',
    );
  return { file: parsed.data, warnings: unknownFieldWarnings(input).map((w) => `${source}: ${w}`) };
}

/** Writes a graph in the format its extension names; returns what the format could not hold. */
export async function saveGraphFile(path: string, file: GraphFile): Promise<string[]> {
  if (graphFormatOf(path) === 'csv') {
    const { graphToCsv } = await import('./csv.js');
    const { text, warnings } = graphToCsv(file);
    await writeFileAtomic(path, text);
    return warnings;
  }
  const { $schema: _previous, ...rest } = file;
  await writeFileAtomic(path, `${JSON.stringify({ $schema: schemaRefFor(path), ...rest }, null, 2)}\n`);
  return [];
}

/**
 * Writes a regular file through a temporary file in the same folder, renamed over it, so readers never
 * see half a file; the file keeps its permissions, a symlink stays a link, and a FIFO or a device is
 * written through, never replaced (see ../write-file.ts). Failures are UserErrors naming the path.
 */
export async function writeFileAtomic(path: string, text: string): Promise<void> {
  try {
    await writeTextFile(path, text);
  } catch (error) {
    throw new UserError(`${path}: cannot write: ${(error as Error).message}`, 1);
  }
}

/** Reads a text file; a missing or unreadable one is a UserError with exit code 2. */
export async function readTextFile(path: string): Promise<string> {
  return (await readFileBytes(path)).toString('utf8');
}

/** Reads a file's bytes; a missing or unreadable one is a UserError with exit code 2. */
async function readFileBytes(path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new UserError(`${path}: no such file`, 2);
    if (code === 'EISDIR') throw new UserError(`${path}: is a folder, not a graph file`, 2);
    throw new UserError(`${path}: cannot read: ${(error as Error).message}`, 2);
  }
}
