/**
 * The run file: a run's whole state as one JSON document, replaced atomically and flushed to the disk
 * after every phase of a step (write-file.ts), so `kill -9` at any moment leaves the last phase saved,
 * never half a file. A run is a few hundred steps of capped outputs, so rewriting it whole stays cheap.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InvalidFileError, UserError } from '../errors.js';
import { withoutBom } from '../graph/json-syntax.js';
import { writeTextFile } from '../write-file.js';
import { RESERVED_FOLDER } from '../../tools/workspace.js';
import { parseRunState, type RunState } from './run-state.js';

/** Saves `state` to `path`, durably. */
export async function saveRun(path: string, state: RunState): Promise<void> {
  try {
    await writeTextFile(path, `${JSON.stringify(state, null, 1)}\n`, { durable: true });
  } catch (error) {
    throw new UserError(`cannot save the run to ${path}: ${(error as Error).message}`, 1);
  }
}

/** Reads a run file; anything that is not one is refused with the first wrong field (exit 2). */
export async function loadRun(path: string): Promise<RunState> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a folder' : (error as Error).message;
    throw new UserError(
      `cannot read the run ${path}: ${reason}`,
      2,
      'pass the file `meta-agent run` named when the run started (WORKSPACE/.meta-agent/runs/NAME-ID.run.json)',
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(withoutBom(text));
  } catch (error) {
    throw new InvalidFileError(`${path} is not a run file: ${(error as Error).message}`);
  }
  const parsed = parseRunState(json);
  if (!parsed.ok) throw new InvalidFileError(`${path} is not a usable run file: ${parsed.problem}`);
  return parsed.state;
}

/** Where a workspace keeps its runs: its reserved folder, out of the agent's reach. */
export function runsFolder(workspace: string): string {
  return join(workspace, RESERVED_FOLDER, 'runs');
}

/**
 * A new run file's path, `WORKSPACE/.meta-agent/runs/PART-…-ID.run.json`, its folder made. A workspace
 * that is not a folder is a UserError (exit 2).
 */
export async function newRunFile(workspace: string, parts: string[], id: string): Promise<string> {
  const folder = runsFolder(workspace);
  try {
    await mkdir(folder, { recursive: true });
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === 'ENOTDIR' ? 'it is not a folder' : (error as Error).message;
    throw new UserError(
      `cannot use ${workspace} as the workspace: ${reason}`,
      2,
      'pass a folder to --workspace',
    );
  }
  return join(folder, `${[...parts.map(slug), id].join('-')}.run.json`);
}

/** A name as part of a file name. */
function slug(name: string): string {
  return (
    name
      .normalize('NFKD')
      .replace(/[^\w-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'run'
  );
}
