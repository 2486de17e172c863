/** What `meta-agent run` does (declared in ../commands/run.ts) with a run file; run-durable.ts with a database. */
import { realpath } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { allowedCommands } from '../../autonomous/allow-rules.js';
import { GoalLoop } from '../../autonomous/goal-loop.js';
import type { GoalRunStore } from '../../autonomous/goal-run-store.js';
import { runsFolder, withoutUnsealedConsent, workspaceFolder } from '../../autonomous/run-file.js';
import type { GoalResources } from '../../autonomous/resources.js';
import type { RunState } from '../../autonomous/run-state.js';
import { UserError } from '../../errors.js';
import { EventBus, type GoalWarningKind } from '../../events.js';
import type { LanguageModel } from '../../llm/types.js';
import { mediaFor } from '../../llm/media.js';
import { UsageMeter } from '../../llm/usage.js';
import { fileStore } from '../../store/files.js';
import { runInFront } from '../goal-front.js';
import {
  givenSettings,
  newRun,
  refuseNewRunFlags,
  rememberRule,
  resumeWith,
  type RunOptions,
} from '../run-setup.js';
import { databaseUrl } from '../database.js';
import { shellGrant } from '../shell-option.js';
import { openRunMemory, openRunResources, runSettings } from '../goal-run-parts.js';
import { modelsFromOptions } from '../model-options.js';
import { speakSteps } from '../speech.js';
import { shownPath as shown, writeErr } from '../terminal.js';
import { traceTo } from '../trace-option.js';
import { namespaceProblem } from '../../../memory/namespaces.js';

export async function runGoals(flags: RunOptions): Promise<void> {
  const shell = shellGrant(flags);
  const options = shell ? { ...flags, shell } : flags;
  const url = databaseUrl(options.database);
  if (url !== undefined) {
    const { runDurably } = await import('./run-durable.js');
    return runDurably(options, url);
  }
  if (options.queue)
    throw new UserError(
      '--queue hands the run to the workers of a database',
      2,
      'pass --database postgres://… (or set META_AGENT_DATABASE_URL)',
    );
  const interactive =
    options.tui && !options.json && process.stdin.isTTY === true && process.stdout.isTTY === true;
  const bus = new EventBus();
  const meter = new UsageMeter(bus);
  // A run file to resume is checked first; a new run's questions and files wait until the models
  // resolve, so a run that could not ask any asks nothing and leaves nothing behind.
  const store = fileStore();
  const resumed =
    options.resume === undefined ? undefined : await resumeRun(store.goalRuns, options.resume, options);
  const given = resumed ? undefined : await givenSettings(options, interactive);
  const badNamespace = typeof options.memory === 'string' && namespaceProblem(options.memory);
  if (badNamespace) throw new UserError(`--memory: ${badNamespace}`, 2);
  const { models, endpoints } = await modelsFromOptions(options);
  const settings = await runSettings(options);
  const metered = meter.meter(models);
  const { state, path } = resumed ?? (await newRun(store.goalRuns, options, given));
  if (metered.chatbot.answersFrom === 'rules')
    writeErr(`[scripted] the answers come from the rules in ${options.script}, not from a model\n`);
  const notices = new HeldNotices(bus, state);
  const memory = await openRunMemory(state, metered, (message) => notices.say(message));
  const opened = await openRunResources(
    state,
    { models: metered, endpoints, events: bus, store },
    options,
    settings,
    memory,
    (message) => notices.say(message, 'mcp'),
  );
  let stopTrace: (() => void) | undefined;
  let stopSpeaking: (() => Promise<void>) | undefined;
  try {
    if (options.trace !== undefined) stopTrace = traceTo(bus, options.trace);
    if (options.speak)
      stopSpeaking = await speakSteps(bus, mediaFor(endpoints.chatbot), (message) =>
        notices.say(message, 'speech'),
      );
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
    await stopSpeaking?.();
    stopTrace?.();
    opened.dispose();
    await memory
      ?.close()
      .catch((error: unknown) => notices.say(`memory was not saved: ${(error as Error).message}`));
  }
}

/**
 * Memory's notices (search by words alone, an index rebuilt) and MCP's (a server that did not start) as
 * `goal.warning` events; those said before the run's view or lines are listening are held until they are.
 */
class HeldNotices {
  readonly #bus: EventBus;
  readonly #state: RunState;
  #held: Array<{ message: string; kind: GoalWarningKind }> | undefined = [];

  constructor(bus: EventBus, state: RunState) {
    this.#bus = bus;
    this.#state = state;
  }

  say(message: string, kind: GoalWarningKind = 'memory'): void {
    if (this.#held) this.#held.push({ message, kind });
    else this.#bus.emit({ type: 'goal.warning', step: this.#state.used.steps, kind, message });
  }

  /** Everyone listens now: say what was held. */
  release(): void {
    const held = this.#held ?? [];
    this.#held = undefined;
    for (const { message, kind } of held) this.say(message, kind);
  }
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
  const front = {
    bus,
    state,
    model: chatbot,
    keptIn: shown(path),
    resume: `--resume ${shown(path)}`,
    ...(options.json && { json: true }),
    interactive,
    listening: () => notices.release(),
  };
  await runInFront(front, (given) => {
    const loop = new GoalLoop({
      state,
      chatbot,
      registry,
      ...(options.contextTokens !== undefined && { contextTokens: options.contextTokens }),
      resources: opened.resources,
      resourceLines: opened.lines,
      permissions: { yes: options.yes ?? false, allow },
      ...(given.approver && { approver: given.approver }),
      rememberRule: (command) => rememberRule(workspace.root, allow, command, given),
      keptAt: { store, key: path },
      events: bus,
    });
    given.started(loop);
    return loop.run(given.signal);
  });
}

/** The run saved in `file`, with the limits and countdown of this command line. */
async function resumeRun(
  store: GoalRunStore,
  file: string,
  options: RunOptions,
): Promise<{ state: RunState; path: string }> {
  refuseNewRunFlags(options);
  const state = await store.load(file);
  state.workspace = await resumedWorkspace(state, resolve(file), options.workspace);
  const dropped = await withoutUnsealedConsent(state);
  if (dropped) writeErr(`[run] ${shown(file)}: ${dropped}\n`);
  resumeWith(state, options, `the run in ${file}`, `--resume ${shown(file)}`);
  return { state, path: resolve(file) };
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
