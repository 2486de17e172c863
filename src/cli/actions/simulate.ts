/** What `meta-agent simulate` does (declared in ../commands/simulate.ts). */
import { randomBytes, randomInt } from 'node:crypto';
import { resolve } from 'node:path';
import { conversationRandom, simulateConversations } from '../../engine/simulate.js';
import { UserError } from '../../errors.js';
import { Interrupted, untilAborted } from '../../interrupt.js';
import { formatUsage, type UsageTotals } from '../../llm/usage.js';
import { databaseUrl } from '../database.js';
import { interruptOnSigint } from '../interrupt.js';
import { modelOptionsToKeep } from '../model-options.js';
import { openAgent, type OpenedAgent } from '../open-agent.js';
import type { GoalLoopOptionValues, ModelOptionValues } from '../options.js';
import {
  finishedOf,
  formatSummary,
  progressLine,
  summarize,
  transcriptOf,
  type FinishedConversation,
} from '../simulation-report.js';
import { writeOut, writeErr } from '../terminal.js';

/** `simulate`'s options as commander parses them. */
export interface SimulateOptions extends ModelOptionValues, GoalLoopOptionValues {
  conversations: number;
  turns: number;
  seed?: number;
  json?: boolean;
  selfReferential?: boolean;
  database?: string;
  simulation?: string;
}

/** Where the conversations are simulated: here, one after another, or on the `simulations` queue. */
interface Conversations {
  seed: number;
  /** Conversation `index` (from 1) once it has finished. */
  finished(index: number): Promise<FinishedConversation>;
  /** The model use of the conversations that finished. */
  usage(): UsageTotals;
  /** The simulation's id, when its conversations are kept in PostgreSQL. */
  simulation?: string;
  /** How to go on after a stop, when the conversations can be collected again. */
  resume?: string;
  close(): Promise<void>;
}

/** Simulates the conversations with the graph at `path`, with progress on stderr and the report on stdout. */
export async function runSimulate(path: string, options: SimulateOptions): Promise<void> {
  const url = databaseUrl(options.database);
  if (options.simulation !== undefined && url === undefined)
    throw new UserError(
      '--simulation names a simulation kept in PostgreSQL',
      2,
      'add --database URL, or set META_AGENT_DATABASE_URL',
    );
  const agent = await openAgent(path, options, {
    selfReferential: options.selfReferential,
    goalLoop: options,
  });
  const count = options.conversations;
  const noun = count === 1 ? 'conversation' : 'conversations';
  const finished: FinishedConversation[] = [];
  // Ctrl+C stops the run; the report covers the conversations that finished.
  const ctrlC = interruptOnSigint();
  let interrupted = false;
  let conversations: Conversations | undefined;
  try {
    conversations = url === undefined ? inThisProcess(agent, options) : await onTheQueue(path, url, options);
    const on = conversations.simulation === undefined ? '' : `, simulation ${conversations.simulation}`;
    writeErr(`simulating ${count} ${noun} of ${agent.graph.name} (seed ${conversations.seed}${on})\n`);
    for (let i = 1; i <= count; i++) {
      const result = await untilAborted(conversations.finished(i), ctrlC.signal);
      finished.push(result);
      writeErr(`${progressLine(i, count, result.conversation)}\n`);
    }
  } catch (error) {
    if (!(error instanceof Interrupted)) throw error;
    interrupted = true;
  } finally {
    ctrlC.dispose();
    await agent.dispose();
    // A stopped simulation leaves its process as a crash would: what it carried goes on elsewhere.
    if (!interrupted) await conversations?.close();
  }
  if (interrupted && finished.length === 0)
    throw new UserError(
      'simulation interrupted before a conversation finished',
      130,
      conversations?.resume && `the conversations go on; collect them with: ${conversations.resume}`,
    );
  const summary = summarize(agent.graph, finished, { seed: conversations!.seed, turns: options.turns });
  if (options.json) {
    const transcripts = finished.map(({ conversation }) => transcriptOf(agent.graph, conversation));
    writeOut(`${JSON.stringify({ ...summary, transcripts }, null, 2)}\n`);
  } else writeOut(`${formatSummary(summary)}\n`);
  writeErr(`${formatUsage(conversations!.usage())}\n`);
  if (interrupted)
    throw new UserError(
      `simulation interrupted after ${finished.length} of ${count} ${noun}`,
      130,
      conversations!.resume
        ? `the report covers the conversations that finished; the others go on, collect them with: ${conversations!.resume}`
        : 'the report covers the conversations that finished',
    );
}

/** The conversations simulated here, one after another, each with its own random source. */
function inThisProcess(agent: OpenedAgent, options: SimulateOptions): Conversations {
  const seed = options.seed ?? randomInt(2 ** 31);
  return {
    seed,
    finished: async (index) =>
      finishedOf(
        await simulateConversations(agent.interpreter, {
          count: 1,
          turns: options.turns,
          rng: conversationRandom(seed, index),
        }),
      ),
    usage: () => agent.meter.total(),
    close: async () => {},
  };
}

/** A simulation's id: it ends up in workflow ids, so letters, digits, `.`, `_` and `-` only. */
const SIMULATION_ID = /^[\w.-]{1,100}$/;

/**
 * The conversations on the `simulations` queue (simulation-workflow.ts), taken by this process and by
 * every worker: those of a simulation begun before (`--simulation ID`) are found there, finished or not.
 */
async function onTheQueue(path: string, url: string, options: SimulateOptions): Promise<Conversations> {
  const simulation = options.simulation ?? `sim-${randomBytes(4).toString('hex')}`;
  if (!SIMULATION_ID.test(simulation))
    throw new UserError(
      `--simulation ${JSON.stringify(simulation)}: use letters, digits, ".", "_" and "-" only`,
      2,
    );
  const { openDatabase } = await import('../../postgres/database.js');
  const { startDurable } = await import('../durable-workflows.js');
  const { enqueueConversation, graphDigest, simulationBegun } = await import('../simulation-workflow.js');
  const db = await openDatabase(url);
  const durable = await startDurable({
    db,
    url,
    role: 'simulate',
    listen: ['simulations'],
    onProblem: (message) => writeErr(`warning: ${message}\n`),
  }).catch(async (error: unknown) => {
    await db.close();
    throw error;
  });
  const close = async () => {
    await durable.shutdown();
    await db.close();
  };
  try {
    const graph = resolve(path);
    const digest = await graphDigest(graph);
    const begun = await simulationBegun(simulation);
    if (begun) checkSameSimulation(simulation, begun, { digest, options });
    const seed = begun?.seed ?? options.seed ?? randomInt(2 ** 31);
    const common = {
      simulation,
      graph,
      digest,
      seed,
      turns: options.turns,
      models: modelOptionsToKeep(options),
      selfReferential: options.selfReferential ?? false,
      goalLoop: {
        ...(options.workspace !== undefined && { workspace: resolve(options.workspace) }),
        ...(options.allow && { allow: options.allow }),
        ...(options.yes && { yes: true }),
        ...(options.goalMaxSteps !== undefined && { goalMaxSteps: options.goalMaxSteps }),
        ...(options.mcpConfig !== undefined && { mcpConfig: resolve(options.mcpConfig) }),
      },
    };
    const handles: Awaited<ReturnType<typeof enqueueConversation>>[] = [];
    for (let index = 1; index <= options.conversations; index++)
      handles.push(await enqueueConversation({ ...common, index }));
    const used: UsageTotals[] = [];
    const database = options.database === undefined ? '' : ' --database URL';
    return {
      seed,
      simulation,
      finished: async (index) => {
        const { usage, ...result } = await handles[index - 1]!.getResult();
        used.push(usage);
        return result;
      },
      usage: () => sumUsage(used),
      resume: `meta-agent simulate ${path} --simulation ${simulation} -n ${options.conversations}${database}`,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The simulation `simulation` goes on only as it began: the same graph file, seed and turns. */
function checkSameSimulation(
  simulation: string,
  begun: { digest: string; seed: number; turns: number },
  given: { digest: string; options: SimulateOptions },
): void {
  const differs = (what: string, hint: string) =>
    new UserError(`simulation "${simulation}" began with ${what}`, 2, hint);
  if (begun.digest !== given.digest)
    throw differs('another version of the graph file', 'restore the file, or start a new simulation');
  if (given.options.seed !== undefined && given.options.seed !== begun.seed)
    throw differs(`seed ${begun.seed}`, 'leave --seed out to go on with it');
  if (given.options.turns !== begun.turns)
    throw differs(`--turns ${begun.turns}`, `give --turns ${begun.turns} to go on with it`);
}

function sumUsage(all: readonly UsageTotals[]): UsageTotals {
  const sum: UsageTotals = { calls: 0, promptTokens: 0, completionTokens: 0, ms: 0, costUsd: 0, local: true };
  for (const usage of all) {
    sum.calls += usage.calls;
    sum.promptTokens += usage.promptTokens;
    sum.completionTokens += usage.completionTokens;
    sum.ms += usage.ms;
    sum.costUsd += usage.costUsd;
    sum.local &&= usage.local;
  }
  return sum;
}
