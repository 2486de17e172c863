/**
 * `meta-agent run --database`: the run kept in PostgreSQL and carried as a durable workflow
 * (goal-run-workflow.ts). By default this process carries it, with the terminal as its front end as
 * always (the view asks; in a pipe, questions wait for `meta-agent approve`); if the process dies, a
 * worker carries it on. With --queue the run is handed to the workers' `goals` queue, and its id
 * printed for `meta-agent approve`.
 */
import { DBOSClient } from '@dbos-inc/dbos-sdk';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { workspaceFolder } from '../../autonomous/run-file.js';
import type { RunState } from '../../autonomous/run-state.js';
import { executorAlive } from '../../durable/runtime.js';
import { UserError } from '../../errors.js';
import { EventBus } from '../../events.js';
import { mediaFor, type OpenAIMedia } from '../../llm/media.js';
import type { Database } from '../../postgres/database.js';
import type { Store } from '../../store/store.js';
import { runInFront } from '../goal-front.js';
import {
  attachFront,
  carriersOf,
  enqueueGoalRun,
  goalRunId,
  startGoalRun,
  type GoalRunInput,
} from '../goal-run-workflow.js';
import { startDurable } from '../durable-workflows.js';
import { runSettings } from '../goal-run-parts.js';
import { modelsFromOptions } from '../model-options.js';
import { speakSteps } from '../speech.js';
import { CLAIMANT, openStore } from '../store-for.js';
import { writeErr, writeOut } from '../terminal.js';
import { traceTo } from '../trace-option.js';
import { version } from '../version.js';
import {
  givenSettings,
  newRun,
  refuseNewRunFlags,
  rememberRule,
  resumeWith,
  type RunOptions,
} from '../run-setup.js';

export async function runDurably(options: RunOptions, url: string): Promise<void> {
  if (options.queue && options.speak)
    throw new UserError(
      '--speak says the run aloud in this terminal, and a queued run is carried by a worker',
      2,
      'leave out --queue to carry the run here, or --speak',
    );
  const interactive =
    !options.queue &&
    options.tui &&
    !options.json &&
    process.stdin.isTTY === true &&
    process.stdout.isTTY === true;
  const opened = await openStore(url);
  const { store } = opened;
  const db = opened.db!;
  try {
    const resumed =
      options.resume === undefined ? undefined : await resumeKept(store, options.resume, options);
    if (resumed) await refuseIfCarried(url, db, resumed.state.id);
    const given = resumed ? undefined : await givenSettings(options, interactive);
    // The models are resolved here too, so a run that could not reach one never starts.
    const { models, endpoints } = await modelsFromOptions(options);
    // Checked here, where a mistake leaves nothing behind; the process that carries the run reads them again.
    await runSettings(options);
    const { state, path: key } = resumed ?? (await newRun(store.goalRuns, options, given));
    await store.goalRuns.save(key, state);
    const input: GoalRunInput = {
      key,
      models: modelOptions(options),
      grants: {
        ...(options.yes && { yes: true }),
        ...(options.allow && { allow: options.allow }),
        ...(options.allowWeb && { allowWeb: options.allowWeb }),
        ...(options.allowPrivateNetwork && { allowPrivateNetwork: true }),
        ...(options.shell && { shell: options.shell }),
        // The process that carries the run (a worker, maybe elsewhere) reads the same file.
        ...(options.mcpConfig !== undefined && { mcpConfig: resolve(options.mcpConfig) }),
      },
      ...(options.contextTokens !== undefined && { contextTokens: options.contextTokens }),
    };
    // A resumed run is a new start of its workflow; its first start keeps the run's own id.
    const workflowID = resumed
      ? `${goalRunId(state.id)}:${randomBytes(3).toString('hex')}`
      : goalRunId(state.id);
    if (options.queue) return await handOver(url, input, workflowID, state, db);
    await carryHere(url, db, store, {
      input,
      workflowID,
      state,
      options,
      interactive,
      chatbot: models.chatbot,
      media: options.speak ? mediaFor(endpoints.chatbot) : undefined,
    });
  } finally {
    await opened.close();
  }
}

/** Puts the run on the `goals` queue for the workers, and says how to follow and answer it. */
async function handOver(url: string, input: GoalRunInput, workflowID: string, state: RunState, db: Database) {
  const client = await DBOSClient.create({ systemDatabaseUrl: url, systemDatabasePoolSize: 2 });
  try {
    await enqueueGoalRun(client, input, workflowID, version());
  } finally {
    await client.destroy();
  }
  writeErr(
    `[run] handed to the workers of ${db.shown}; answer its questions with meta-agent approve ${state.id} y|n|y -N|"feedback"\n`,
  );
  writeOut(`${state.id}\n`);
}

/** Carries the run in this process as a durable workflow, with the terminal as its front end. */
async function carryHere(
  url: string,
  db: Database,
  store: Store,
  run: {
    input: GoalRunInput;
    workflowID: string;
    state: RunState;
    options: RunOptions;
    interactive: boolean;
    chatbot: { modelName: string; answersFrom: 'model' | 'rules' };
    /** The speech endpoint of --speak (none: a speech program, or silence). */
    media: OpenAIMedia | undefined;
  },
): Promise<void> {
  const { input, workflowID, state, options, interactive, chatbot } = run;
  // This process takes no queued work: it carries its own run only.
  const durable = await startDurable({
    db,
    url,
    role: 'run',
    executorId: CLAIMANT,
    listen: [],
    store,
    onProblem: (message) => writeErr(`warning: ${message}\n`),
  });
  const bus = new EventBus();
  const stopTrace = options.trace === undefined ? undefined : traceTo(bus, options.trace);
  if (chatbot.answersFrom === 'rules')
    writeErr(`[scripted] the answers come from the rules in ${options.script}, not from a model\n`);
  if (!interactive)
    writeErr(
      `[run] a command that needs an answer waits for meta-agent approve ${state.id} y|n|y -N|"feedback"\n`,
    );
  try {
    await runInFront(
      {
        bus,
        state,
        model: chatbot,
        keptIn: `${db.shown} as run ${state.id}`,
        resume: `--database … --resume ${state.id}`,
        ...(options.json && { json: true }),
        interactive,
      },
      async (front) => {
        const stopSpeaking = options.speak
          ? await speakSteps(bus, run.media, (message) =>
              bus.emit({ type: 'goal.warning', step: state.used.steps, kind: 'speech', message }),
            )
          : undefined;
        const detach = attachFront(state.id, {
          events: bus,
          ...(front.approver && { approver: front.approver }),
          rememberRule: (command) => rememberRule(state.workspace, options.allow ?? [], command, front),
          signal: front.signal,
          started: (loop) => front.started(loop),
        });
        try {
          await (await startGoalRun(input, workflowID, false)).getResult();
        } finally {
          detach();
          await stopSpeaking?.();
        }
        return store.goalRuns.load(input.key);
      },
    );
  } finally {
    stopTrace?.();
    await durable.shutdown();
  }
}

/** The run kept under `key`, with this command line's limits; a run a process carries now is refused. */
async function resumeKept(
  store: Store,
  key: string,
  options: RunOptions,
): Promise<{ state: RunState; path: string }> {
  refuseNewRunFlags(options);
  // A run in the database needs no seal on its consent, nor its workspace checked against where it is
  // kept, as a run file does: the database is the user's, not a file someone sent.
  const state = await store.goalRuns.load(key);
  state.workspace = await workspaceFolder(resolve(options.workspace ?? state.workspace));
  resumeWith(state, options, `run ${key}`, `--database … --resume ${state.id}`);
  return { state, path: key };
}

/**
 * A run some process carries now (or that waits on the queue) is not started a second time. A carrier
 * that is gone (killed, or its machine down: durable/runtime.ts executorAlive) is let go of here, so
 * `--resume` takes the run on at once even when no worker is there to reap it.
 */
async function refuseIfCarried(url: string, db: Database, run: string): Promise<void> {
  const client = await DBOSClient.create({ systemDatabaseUrl: url, systemDatabasePoolSize: 1 });
  try {
    // A database no durable process used yet has no DBOS tables, and no run carried.
    const carriers = await carriersOf(client, run).catch((error: unknown) => {
      if ((error as { code?: string }).code === '42P01') return [];
      throw error;
    });
    for (const carrier of carriers) {
      const gone =
        carrier.status === 'PENDING' &&
        carrier.executorId !== undefined &&
        !(await executorAlive(db.pool, carrier.executorId));
      if (!gone)
        throw new UserError(
          `run ${run} is being carried by another process (or waits on the goals queue for one)`,
          2,
          `answer its questions with meta-agent approve ${run}; resume it once it has stopped`,
        );
      await client.cancelWorkflow(carrier.workflowID);
    }
  } finally {
    await client.destroy();
  }
}

/** The model options of the command line, as the run carries them (no keys: those stay in the environment). */
function modelOptions(options: RunOptions): GoalRunInput['models'] {
  const { model, baseUrl, provider, classifierModel, userbotModel, embedderModel } = options;
  // Another process reads the rules file: by its absolute path (on the shared disk).
  const script = options.script === undefined ? undefined : resolve(options.script);
  return Object.fromEntries(
    Object.entries({ model, baseUrl, provider, script, classifierModel, userbotModel, embedderModel }).filter(
      ([, value]) => value !== undefined,
    ),
  );
}
