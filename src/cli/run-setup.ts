/**
 * What a goal run starts from on the command line, wherever it is kept (a run file, or the database
 * as a durable workflow): `run`'s options, a new run from the goals (or the terminal's questions), a
 * saved run with this command line's limits, and an "always" answer kept for the workspace.
 */
import { resolve } from 'node:path';
import {
  aiSettingsPath,
  readAiSettings,
  writeAiSettings,
  type AgentSettings,
} from '../autonomous/ai-settings.js';
import { allowRulesPath, rememberAllowRule } from '../autonomous/allow-rules.js';
import type { GoalRunStore } from '../autonomous/goal-run-store.js';
import type { ShellGrant } from '../autonomous/resources.js';
import { workspaceFolder } from '../autonomous/run-file.js';
import { DEFAULT_ROLE, newRunState, type Budget, type RunState } from '../autonomous/run-state.js';
import { UserError } from '../errors.js';
import { raisedLimit } from './continue-run.js';
import type { Front } from './goal-front.js';
import { askForGoals, askToContinue } from './goal-setup.js';
import type { ModelOptionValues } from './options.js';
import { shownPath as shown, writeErr } from './terminal.js';
import { agentNamespace } from '../../memory/namespaces.js';

/** `run`'s options as commander parses them. */
export interface RunOptions extends ModelOptionValues {
  goal?: string[];
  name?: string;
  role?: string;
  /** An ai_settings.yaml to take the name, role and goals from. */
  aiSettings?: string;
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
  /** Say each step's speak thought aloud. */
  speak?: boolean;
}

/** Steps a new run may take unless --max-steps says otherwise. */
export const DEFAULT_MAX_STEPS = 50;

/** `--resume` with new goals, a name or a role is refused: a resumed run keeps its own. */
export function refuseNewRunFlags(options: RunOptions): void {
  if (options.goal || options.name || options.role || options.aiSettings !== undefined)
    throw new UserError(
      '--resume continues a saved run with its own goals, name and role',
      2,
      'leave out --goal, --name, --role and --ai-settings, or start a new run without --resume',
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

/**
 * What the command line gives a new run: one to five goals (with --name and --role), or an
 * --ai-settings file; undefined when a terminal is to ask. Without a terminal the workspace's last
 * settings are never taken unasked (the hint names the file to pass): whoever could write that file
 * would choose the goals of an unattended run.
 */
export async function givenSettings(
  options: RunOptions,
  interactive: boolean,
): Promise<AgentSettings | undefined> {
  const goals = options.goal ?? [];
  if (options.aiSettings !== undefined) {
    if (goals.length > 0 || options.name !== undefined || options.role !== undefined)
      throw new UserError(
        '--ai-settings gives the name, role and goals',
        2,
        'leave out --goal, --name and --role, or --ai-settings',
      );
    return settingsFile(options.aiSettings);
  }
  if (goals.length > 5)
    throw new UserError(`${goals.length} goals given; a run takes at most 5`, 2, 'merge or drop some --goal');
  if (goals.length > 0) return { name: options.name ?? 'Agent', role: options.role ?? DEFAULT_ROLE, goals };
  if (interactive) return undefined;
  const last = aiSettingsPath(resolve(options.workspace ?? 'workspace'));
  const kept = (await readAiSettings(last, false)).ok;
  throw new UserError(
    'no goal given',
    2,
    kept
      ? `pass --goal "…" (up to 5), or go on with the last settings (read them first): --ai-settings ${shown(last)}`
      : 'pass --goal "…" (up to 5), or run in a terminal to be asked',
  );
}

/** The settings in the file the user named; a file that holds none is a UserError. */
async function settingsFile(file: string): Promise<AgentSettings> {
  const read = await readAiSettings(resolve(file), true);
  if (!read.ok)
    throw new UserError(
      `--ai-settings ${file}: ${read.problem}`,
      2,
      'give a YAML file with ai_name, ai_role and ai_goals (1 to 5), as runs keep in WORKSPACE/.meta-agent/ai_settings.yaml',
    );
  writeErr(
    `[run] name, role and ${read.settings.goals.length} goal(s) from ${file}: ${read.settings.name}\n`,
  );
  return read.settings;
}

/**
 * In a terminal: the workspace's last settings, if the user goes on with them, else the answers to the
 * questions. Only when neither --name nor --role was given: those start settings of their own.
 */
async function askedSettings(options: RunOptions): Promise<AgentSettings> {
  if (options.name === undefined && options.role === undefined) {
    const path = aiSettingsPath(resolve(options.workspace ?? 'workspace'));
    const last = await readAiSettings(path, false);
    if (last.ok) {
      if (await askToContinue(last.settings)) return last.settings;
    } else if (!last.missing) {
      writeErr(`warning: the last settings in ${shown(path)} are not offered: ${last.problem}\n`);
    }
  }
  return askForGoals({ name: options.name, role: options.role });
}

/**
 * A new run from what the command line gave (`given`, from givenSettings), or from the terminal, and
 * the folder its file goes in. Its settings are kept in the workspace for the next start.
 */
export async function newRun(
  store: GoalRunStore,
  options: RunOptions,
  given: AgentSettings | undefined,
): Promise<{ state: RunState; path: string }> {
  const setup = given ?? (await askedSettings(options));
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
  const path = await store.create(state, [setup.name]);
  try {
    await writeAiSettings(workspace, setup);
  } catch (error) {
    // The run goes on; only the offer at the next start is lost.
    writeErr(`warning: the settings were not kept for the next run: ${(error as Error).message}\n`);
  }
  return { state, path };
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
