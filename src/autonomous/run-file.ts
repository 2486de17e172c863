/**
 * The run file: a run's whole state as one JSON document, replaced atomically and flushed to the disk
 * after every phase of a step (write-file.ts), so `kill -9` at any moment leaves the last phase saved,
 * never half a file. A run is a few hundred steps of capped outputs, so rewriting it whole stays cheap.
 */
import { mkdir, readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { UserError } from '../errors.js';
import { parseJsonText } from '../graph/load.js';
import { writeTextFile } from '../write-file.js';
import { RESERVED_FOLDER } from '../../tools/workspace-path.js';
import {
  configInsideWorkspace,
  consentKey,
  isSealed,
  seal,
  userConfigDir,
  type ConsentKey,
} from './consent.js';
import { loadedRunState, type RunState } from './run-state.js';

/** Saves `state` to `path`, durably, its consent sealed with the user's key (when there is one). */
export async function saveRun(path: string, state: RunState): Promise<void> {
  const key = await userKey();
  if ('key' in key) state.consent = seal(key.key, RUN_CONSENT, consentOf(state));
  else delete state.consent;
  try {
    await writeTextFile(path, `${JSON.stringify(state, null, 1)}\n`, { durable: true });
  } catch (error) {
    throw new UserError(`cannot save the run to ${path}: ${(error as Error).message}`, 1);
  }
}

const RUN_CONSENT = 'meta-agent run consent';

/**
 * What lets a resumed run carry on without asking: an approved command, the `y -N` countdown. It names
 * the run and its workspace, so a seal cannot be moved to another run or folder.
 */
function consentOf(state: RunState) {
  const { pending } = state;
  return {
    id: state.id,
    workspace: state.workspace,
    continuousLeft: state.continuousLeft,
    pending: pending && {
      step: pending.step,
      command: pending.command,
      phase: pending.phase,
      by: pending.by,
    },
  };
}

let processKey: Promise<ConsentKey> | undefined;

/** The user's consent key, read once per process. */
function userKey(): Promise<ConsentKey> {
  processKey ??= consentKey();
  return processKey;
}

/**
 * Drops the consent of a loaded run unless the user's key sealed it (`state.workspace` must be the
 * workspace's real path by now): an approved command is asked for again, and the countdown ends.
 * Returns what was dropped, said to the user, or undefined when nothing was.
 */
export async function withoutUnsealedConsent(state: RunState): Promise<string | undefined> {
  const key = await userKey();
  const inside = configInsideWorkspace(userConfigDir(), state.workspace);
  if (!inside && 'key' in key && isSealed(key.key, RUN_CONSENT, consentOf(state), state.consent))
    return undefined;
  const dropped: string[] = [];
  const { pending } = state;
  if (pending?.phase === 'approved' && pending.by !== 'no-effect') {
    pending.phase = 'answered';
    delete pending.by;
    dropped.push(`the approval of ${pending.command.name} (asked for again)`);
  }
  if (state.continuousLeft > 0) {
    dropped.push(`the countdown of ${state.continuousLeft} commands without asking`);
    state.continuousLeft = 0;
  }
  if (dropped.length === 0) return undefined;
  const why =
    inside ??
    ('problem' in key ? key.problem : 'it was edited, or saved by another user or an earlier version');
  return `its consent is not sealed by your key (${why}), so it does not carry over: ${dropped.join('; ')}`;
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
  return loadedRunState(parseJsonText(text, path), path);
}

/** Where a workspace keeps its runs: its reserved folder, out of the agent's reach. */
export function runsFolder(workspace: string): string {
  return join(workspace, RESERVED_FOLDER, 'runs');
}

/**
 * The workspace at `workspace`, made when missing, as its real path: the folder the jail confines a
 * run to, and the one its consent is sealed to. A path that is not a folder is a UserError (exit 2).
 */
export async function workspaceFolder(workspace: string): Promise<string> {
  try {
    await mkdir(workspace, { recursive: true });
    return await realpath(workspace);
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === 'ENOTDIR' ||
      (error as NodeJS.ErrnoException).code === 'EEXIST'
        ? 'it is not a folder'
        : (error as Error).message;
    throw new UserError(
      `cannot use ${workspace} as the workspace: ${reason}`,
      2,
      'pass a folder to --workspace',
    );
  }
}

/**
 * A new run file's path, `WORKSPACE/.meta-agent/runs/PART-…-ID.run.json`, its folder made; `workspace`
 * is one workspaceFolder gave.
 */
export async function newRunFile(workspace: string, parts: string[], id: string): Promise<string> {
  const folder = runsFolder(workspace);
  try {
    await mkdir(folder, { recursive: true });
  } catch (error) {
    throw new UserError(
      `cannot keep runs in ${folder}: ${(error as Error).message}`,
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
