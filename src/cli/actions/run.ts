/** What `meta-agent run` does (declared in ../commands/run.ts). */
import { realpath } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { subAgentsOf } from '../../agent/open.js';
import { allowedCommands, allowRulesPath, rememberAllowRule } from '../../autonomous/allow-rules.js';
import { GoalLoop } from '../../autonomous/goal-loop.js';
import type { GoalRunStore } from '../../autonomous/goal-run-store.js';
import { runsFolder, withoutUnsealedConsent, workspaceFolder } from '../../autonomous/run-file.js';
import { openGoalResources, type GoalResources } from '../../autonomous/resources.js';
import { DEFAULT_ROLE, newRunState, type Budget, type RunState } from '../../autonomous/run-state.js';
import { InvalidFileError, UserError } from '../../errors.js';
import { EventBus } from '../../events.js';
import type { LanguageModel, ModelSet } from '../../llm/types.js';
import { UsageMeter } from '../../llm/usage.js';
import { fileStore } from '../../store/files.js';
import type { Store } from '../../store/store.js';
import { printEvents } from '../chat-lines.js';
import { printGoalLines, runSummary } from '../goal-lines.js';
import { databaseUrl } from '../database.js';
import { askForGoals } from '../goal-setup.js';
import { stopOnCtrlC } from '../interrupt.js';
import { modelsFromOptions } from '../model-options.js';
import type { ModelOptionValues } from '../options.js';
import { shownPath as shown, writeErr, writeOut } from '../terminal.js';
import { traceTo } from '../trace-option.js';
import { agentNamespace, namespaceProblem } from '../../../memory/namespaces.js';
import type { LongTermMemory } from '../../../tools/command.js';

/** `run`'s options as commander parses them. */
export interface RunOptions extends ModelOptionValues {
  /** PostgreSQL for this run's work (else META_AGENT_DATABASE_URL); its memory lives there too. */
  database?: string;
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
}

/** Steps a new run may take unless --max-steps says otherwise. */
export const DEFAULT_MAX_STEPS = 50;

export async function runGoals(options: RunOptions): Promise<void> {
  const interactive =
    options.tui && !options.json && process.stdin.isTTY === true && process.stdout.isTTY === true;
  const bus = new EventBus();
  const meter = new UsageMeter(bus);
  // A run file to resume is checked first; a new run's questions and files wait until the models
  // resolve, so a run that could not ask any asks nothing and leaves nothing behind.
  const store = fileStore();
  const resumed =
    options.resume === undefined ? undefined : await resumeRun(store.goalRuns, options.resume, options);
  if (!resumed) checkGoals(options.goal ?? [], interactive);
  const badNamespace = typeof options.memory === 'string' && namespaceProblem(options.memory);
  if (badNamespace) throw new UserError(`--memory: ${badNamespace}`, 2);
  const { models } = await modelsFromOptions(options);
  const metered = meter.meter(models);
  const { state, path } = resumed ?? (await newRun(store.goalRuns, options));
  if (metered.chatbot.answersFrom === 'rules')
    writeErr(`[scripted] the answers come from the rules in ${options.script}, not from a model\n`);
  const notices = new HeldNotices(bus, state);
  const memory = await openRunMemory(state, metered, notices, databaseUrl(options.database));
  const opened = await openResources(state, { models: metered, events: bus, store }, options, memory);
  const stopTrace = options.trace === undefined ? undefined : traceTo(bus, options.trace);
  try {
    await goOn(state, path, {
      bus,
      chatbot: metered.chatbot,
      opened,
      options,
      interactive,
      notices,
      store: store.goalRuns,
    });
  } finally {
    stopTrace?.();
    opened.dispose();
    await memory
      ?.close()
      .catch((error: unknown) => notices.say(`memory was not saved: ${(error as Error).message}`));
  }
}

/**
 * Memory's notices (search by words alone, an index rebuilt) as `goal.warning` events; those said before
 * the run's view or lines are listening are held until they are.
 */
class HeldNotices {
  readonly #bus: EventBus;
  readonly #state: RunState;
  #held: string[] | undefined = [];

  constructor(bus: EventBus, state: RunState) {
    this.#bus = bus;
    this.#state = state;
  }

  say(message: string): void {
    if (this.#held) this.#held.push(message);
    else this.#bus.emit({ type: 'goal.warning', step: this.#state.used.steps, kind: 'memory', message });
  }

  /** Everyone listens now: say what was held. */
  release(): void {
    const held = this.#held ?? [];
    this.#held = undefined;
    for (const message of held) this.say(message);
  }
}

/** The run's long-term memory, unless it has none (--no-memory): in `database` when there is one. */
async function openRunMemory(
  state: RunState,
  models: ModelSet,
  notices: HeldNotices,
  database: string | undefined,
) {
  if (state.memory === undefined) return undefined;
  const { openMemory } = await import('../../autonomous/memory.js');
  return openMemory({
    workspace: state.workspace,
    ...(database !== undefined && { database }),
    namespace: state.memory,
    embedder: models.embedder,
    onNotice: (message) => notices.say(message),
  });
}

/** Runs the loop with its front end: the run view in a terminal, lines or JSON events otherwise. */
async function goOn(
  state: RunState,
  path: string,
  setup: {
    bus: EventBus;
    chatbot: LanguageModel;
    opened: GoalResources;
    options: RunOptions;
    interactive: boolean;
    notices: HeldNotices;
    store: GoalRunStore;
  },
): Promise<void> {
  const { bus, chatbot, opened, options, interactive, notices, store } = setup;
  const { workspace, registry } = opened;
  const allow = await allowedCommands(options.allow ?? [], workspace.root, registry.names(), (message) =>
    writeErr(`warning: ${message}\n`),
  );
  const stopPrinting = options.json
    ? printEvents(bus, (line) => writeOut(line))
    : interactive
      ? undefined
      : printGoalLines(bus, (line) => writeOut(line));
  writeErr(`[run] saving to ${shown(path)} after every step\n`);
  const ui = interactive
    ? (await import('../../tui/goal/index.js')).renderGoalUI({
        bus,
        state,
        model: chatbot.modelName,
        scripted: chatbot.answersFrom === 'rules',
        savedTo: shown(path),
      })
    : undefined;
  notices.release();
  const loop = new GoalLoop({
    state,
    chatbot,
    registry,
    ...(options.contextTokens !== undefined && { contextTokens: options.contextTokens }),
    resources: opened.resources,
    resourceLines: opened.lines,
    permissions: { yes: options.yes ?? false, allow },
    ...(ui && { approver: ui.approver }),
    rememberRule: async (command) => {
      try {
        await rememberAllowRule(workspace.root, [...allow], command);
        ui?.notice(`${command} is now allowed in this workspace (kept in ${shown(allowRulesPath())})`);
      } catch (error) {
        // It is allowed for the rest of this run all the same.
        ui?.notice(`${(error as Error).message}; ${command} is allowed for this run only`);
      }
    },
    keptAt: { store, key: path },
    events: bus,
  });
  // In the run view, Ctrl+C once asks before the next command and twice stops the run (saved at its last
  // phase) and exits 130. Without the view there is nobody to ask, so the first press stops it.
  const ctrlC = stopOnCtrlC({
    first: ui
      ? () => {
          loop.interrupt();
          ui.notice('Ctrl+C: the next command will be asked for; press Ctrl+C again to save and exit');
        }
      : undefined,
    afterStop: 'wait',
  });
  try {
    const ended = await loop.run(ctrlC.signal);
    // The view's last frame stays on screen; the summary comes after it, as in a pipe.
    ui?.finish();
    ui?.unmount();
    if (!options.json) writeOut(`${runSummary(ended)}\n`);
    if (ended.ended?.reason !== 'task_complete') writeErr(`[run] continue it with --resume ${shown(path)}\n`);
    process.exitCode = exitCodeOf(ended, ctrlC.signal.aborted);
  } catch (error) {
    writeErr(`[run] the run is saved; continue it with --resume ${shown(path)}\n`);
    throw error;
  } finally {
    ctrlC.dispose();
    ui?.unmount();
    stopPrinting?.();
  }
}

/** The run saved in `file`, with the limits and countdown of this command line. */
async function resumeRun(
  store: GoalRunStore,
  file: string,
  options: RunOptions,
): Promise<{ state: RunState; path: string }> {
  if (options.goal || options.name || options.role)
    throw new UserError(
      '--resume continues a saved run with its own goals, name and role',
      2,
      'leave out --goal, --name and --role, or start a new run without --resume',
    );
  const state = await store.load(file);
  state.workspace = await resumedWorkspace(state, resolve(file), options.workspace);
  const dropped = await withoutUnsealedConsent(state);
  if (dropped) writeErr(`[run] ${shown(file)}: ${dropped}\n`);
  if (state.ended?.reason === 'task_complete')
    throw new UserError(
      `the run in ${file} is complete (task_complete: ${state.ended.detail})`,
      2,
      'start a new run with --goal',
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
  return { state, path: resolve(file) };
}

/** Goals from the flags must be one to five; without any, only a terminal can ask for them. */
function checkGoals(goals: string[], interactive: boolean): void {
  if (goals.length === 0 && !interactive)
    throw new UserError('no goal given', 2, 'pass --goal "…" (up to 5), or run in a terminal to be asked');
  if (goals.length > 5)
    throw new UserError(`${goals.length} goals given; a run takes at most 5`, 2, 'merge or drop some --goal');
}

/** A new run from the flags, or from the questions in a terminal, and the folder its file goes in. */
async function newRun(store: GoalRunStore, options: RunOptions): Promise<{ state: RunState; path: string }> {
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

/**
 * Where a resumed run may work, as a real path. A run file is kept in its workspace's
 * `.meta-agent/runs/`; one found anywhere else (a file someone sent) does not get to name the folder its
 * agent may write in: the user names it with --workspace. Links are resolved before the two are
 * compared, so a workspace written as `…/link/..` cannot move the jail somewhere the user never named.
 */
async function resumedWorkspace(state: RunState, path: string, given: string | undefined): Promise<string> {
  if (given !== undefined) return workspaceFolder(resolve(given));
  const [workspace, folder] = await Promise.all([
    realpath(state.workspace).catch(() => undefined),
    realpath(dirname(path)).catch(() => undefined),
  ]);
  if (workspace !== undefined && folder === runsFolder(workspace)) return workspace;
  throw new UserError(
    `the run file says its workspace is ${state.workspace}, but it is not kept in that workspace`,
    2,
    'pass --workspace DIR to choose the folder the resumed run may use',
  );
}

function budgetFrom(options: RunOptions): Budget {
  return {
    ...(options.maxSteps !== undefined && { maxSteps: options.maxSteps }),
    ...(options.maxTokens !== undefined && { maxTokens: options.maxTokens }),
    ...(options.maxCost !== undefined && { maxCostUsd: options.maxCost }),
    ...(options.maxTime !== undefined && { maxTimeMs: options.maxTime * 1000 }),
  };
}

/**
 * The run's workspace, sandbox and sub-agents (brought back with their conversations when resumed). A
 * sub-agent is opened as any agent is, and its own goal_loop nodes may do what this run's commands may.
 */
async function openResources(
  state: RunState,
  world: { models: ModelSet; events: EventBus; store: Store },
  options: RunOptions,
  memory: LongTermMemory | undefined,
): Promise<GoalResources> {
  const goalLoop = {
    workspace: state.workspace,
    ...(options.allow && { allow: options.allow }),
    ...(options.yes && { yes: true }),
  };
  const subAgents = subAgentsOf({ ...world, goalLoop, folder: state.workspace }, 0);
  try {
    return await openGoalResources({
      workspace: state.workspace,
      models: world.models,
      events: world.events,
      ...(subAgents && { subAgents }),
      ...(memory && { memory }),
      ...(options.allowWeb && { allowWeb: options.allowWeb }),
      ...(options.allowPrivateNetwork && { allowPrivateNetwork: true }),
      ...(state.agents !== undefined && { agents: state.agents }),
    });
  } catch (error) {
    throw new InvalidFileError(
      `cannot open the run's workspace ${state.workspace}: ${(error as Error).message}`,
    );
  }
}

function exitCodeOf(state: RunState, interrupted: boolean): number {
  if (interrupted) return 130;
  const reason = state.ended?.reason;
  return reason === 'task_complete' || reason === 'user' ? 0 : 1;
}
