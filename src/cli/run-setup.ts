/**
 * What a goal run starts from on the command line, wherever it is kept (a run file, or the database
 * as a durable workflow): `run`'s options, a new run from the goals (or the terminal's questions), a
 * saved run with this command line's limits, and an "always" answer kept for the workspace.
 */
import { resolve } from 'node:path';
import { allowRulesPath, rememberAllowRule } from '../autonomous/allow-rules.js';
import type { GoalRunStore } from '../autonomous/goal-run-store.js';
import type { ShellGrant } from '../autonomous/resources.js';
import { workspaceFolder } from '../autonomous/run-file.js';
import { DEFAULT_ROLE, newRunState, type Budget, type RunState } from '../autonomous/run-state.js';
import { UserError } from '../errors.js';
import { raisedLimit } from './continue-run.js';
import type { Front } from './goal-front.js';
import { askForGoals } from './goal-setup.js';
import type { ModelOptionValues } from './options.js';
import { shownPath as shown, writeErr } from './terminal.js';
import { agentNamespace } from '../../memory/namespaces.js';

/** `run`'s options as commander parses them. */
export interface RunOptions extends ModelOptionValues {
  goal?: string[];
  name?: string;
  role?: string;
  workspace?: string;
  resume?: string;
  yes?: boolean;
  continuous?: number;
  allow?: string[];
  allowWeb?: string[];
  allowPrivateNetwork?: boolean;
  /** --allow-shell: offer execute_shell, contained by bubblewrap. */
  allowShell?: boolean;
  /** --allow-unsandboxed-shell: as --allow-shell, unconfined where bubblewrap cannot work. */
  allowUnsandboxedShell?: boolean;
  /** --shell-timeout, in seconds. */
  shellTimeout?: number;
  /** What those three come to on this machine, decided as the run starts (shell-option.ts). */
  shell?: ShellGrant;
  /** A namespace, true for the default (the agent's), false for none (--no-memory). */
  memory: string | boolean;
  contextTokens?: number;
  maxSteps?: number;
  maxTokens?: number;
  maxCost?: number;
  maxTime?: number;
  answers: 'auto' | 'json';
  json?: boolean;
  trace?: string;
  tui: boolean;
  /** Keep the run in this PostgreSQL (else META_AGENT_DATABASE_URL, else a run file). */
  database?: string;
  /** With a database: hand the run to the workers instead of carrying it here. */
  queue?: boolean;
  /** The MCP servers whose tools the run offers (default: the user's mcp.json). */
  mcpConfig?: string;
}

/** Steps a new run may take unless --max-steps says otherwise. */
export const DEFAULT_MAX_STEPS = 50;

/** `--resume` with new goals, a name or a role is refused: a resumed run keeps its own. */
export function refuseNewRunFlags(options: RunOptions): void {
  if (options.goal || options.name || options.role)
    throw new UserError(
      '--resume continues a saved run with its own goals, name and role',
      2,
      'leave out --goal, --name and --role, or start a new run without --resume',
    );
}

/**
 * The saved run `state` (`what` names it, `resume` is how the user names it again: `--resume FILE`)
 * with the limits, countdown and memory of this command line; a run that ended for a reason other
 * than task_complete goes on from where it ended. One that took all its steps goes on only with more.
 */
export function resumeWith(state: RunState, options: RunOptions, what: string, resume: string): void {
  if (state.ended?.reason === 'task_complete')
    throw new UserError(
      `${what} is complete (task_complete: ${state.ended.detail})`,
      2,
      'start a new run with --goal',
    );
  const { maxSteps } = budgetFrom(options);
  if (
    state.ended?.reason === 'max_steps' &&
    state.used.steps >= (maxSteps ?? state.budget.maxSteps ?? Infinity)
  )
    throw new UserError(
      `${what} ended at its step limit (${state.used.steps} of ${maxSteps ?? state.budget.maxSteps}), and would end again at once`,
      2,
      `raise the limit: meta-agent run ${resume} ${raisedLimit(state)}`,
    );
  state.budget = { ...state.budget, ...budgetFrom(options) };
  if (options.continuous !== undefined) state.continuousLeft = options.continuous;
  if (options.memory === false) delete state.memory;
  else if (typeof options.memory === 'string') state.memory = options.memory;
  if (state.ended) {
    writeErr(`[run] resuming a run that ended with ${state.ended.reason}: ${state.ended.detail}\n`);
    delete state.ended;
    state.unusableStreak = 0;
    state.refusedStreak = 0;
  }
}

/** Goals from the flags must be one to five; without any, only a terminal can ask for them. */
export function checkGoals(goals: string[], interactive: boolean): void {
  if (goals.length === 0 && !interactive)
    throw new UserError('no goal given', 2, 'pass --goal "…" (up to 5), or run in a terminal to be asked');
  if (goals.length > 5)
    throw new UserError(`${goals.length} goals given; a run takes at most 5`, 2, 'merge or drop some --goal');
}

/** A new run from the flags, or from the questions in a terminal, and the folder its file goes in. */
export async function newRun(
  store: GoalRunStore,
  options: RunOptions,
): Promise<{ state: RunState; path: string }> {
  const setup =
    options.goal && options.goal.length > 0
      ? { name: options.name ?? 'Agent', role: options.role ?? DEFAULT_ROLE, goals: options.goal }
      : await askForGoals({ name: options.name, role: options.role });
  const workspace = await workspaceFolder(resolve(options.workspace ?? 'workspace'));
  const state = newRunState({
    ...setup,
    workspace,
    budget: { maxSteps: DEFAULT_MAX_STEPS, ...budgetFrom(options) },
    ...(options.continuous !== undefined && { continuous: options.continuous }),
    answerFormat: options.answers,
    ...(options.memory !== false && {
      memory: typeof options.memory === 'string' ? options.memory : agentNamespace(setup.name),
    }),
  });
  return { state, path: await store.create(state, [setup.name]) };
}

/** Keeps an "always" answer for the workspace, and says so (or why it cannot) in the view. */
export async function rememberRule(
  workspace: string,
  allow: ReadonlySet<string> | readonly string[],
  command: string,
  front: Pick<Front, 'notice'>,
): Promise<void> {
  try {
    await rememberAllowRule(workspace, [...allow], command);
    front.notice(`${command} is now allowed in this workspace (kept in ${shown(allowRulesPath())})`);
  } catch (error) {
    // It is allowed for the rest of this run all the same.
    front.notice(`${(error as Error).message}; ${command} is allowed for this run only`);
  }
}

function budgetFrom(options: RunOptions): Budget {
  return {
    ...(options.maxSteps !== undefined && { maxSteps: options.maxSteps }),
    ...(options.maxTokens !== undefined && { maxTokens: options.maxTokens }),
    ...(options.maxCost !== undefined && { maxCostUsd: options.maxCost }),
    ...(options.maxTime !== undefined && { maxTimeMs: options.maxTime * 1000 }),
  };
}
