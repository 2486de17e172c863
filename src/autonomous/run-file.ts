/**
 * The run file's side of the goal loop: where a workspace keeps its runs, and the seal of a run's
 * consent under the user's key. The file's format, a journal saved after every phase of a step, is the
 * store's (store/run-journal.ts).
 */
import { mkdir, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { UserError } from '../errors.js';
import { RESERVED_FOLDER } from '../../tools/workspace-path.js';
import {
  configInsideWorkspace,
  consentKey,
  isSealed,
  seal,
  userConfigDir,
  type ConsentKey,
} from './consent.js';
import type { RunState } from './run-state.js';

/** Seals the consent of `state` with the user's key (when there is one), as it is about to be saved. */
export async function sealConsent(state: RunState): Promise<void> {
  const key = await userKey();
  if ('key' in key) state.consent = seal(key.key, RUN_CONSENT, consentOf(state));
  else delete state.consent;
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
