/**
 * What `chat`, `call` and `simulate` share before they run a graph: open and lint the file with the
 * command-line config overrides, load a conversation to resume from the store, choose the graph the run
 * edits or reads (self-referential mode, a resumed conversation), resolve the models (metered, so every
 * call is an event) and open the agent with src/agent's opener, on one event bus.
 */
import { dirname, resolve } from 'node:path';
import { agentOpener } from '../agent/open.js';
import { conversationGraph } from '../engine/self-mode.js';
import { stateMismatch, type ConversationState } from '../engine/state.js';
import type { Interpreter } from '../engine/interpreter.js';
import { UserError, isUserError } from '../errors.js';
import { EventBus } from '../events.js';
import { closestName } from '../graph/names.js';
import type { GraphConfig, GraphFile } from '../graph/schema.js';
import type { GraphView } from '../graph/view.js';
import type { ModelSet } from '../llm/types.js';
import { unavailableModels } from '../llm/unavailable.js';
import { UsageMeter } from '../llm/usage.js';
import { startOver } from '../store/conversation-journal.js';
import { fileStore } from '../store/files.js';
import type { Store } from '../store/store.js';
import { flowModels } from './flow-models.js';
import { openGraph } from './load-graph.js';
import { mcpServersFor } from './mcp-setup.js';
import {
  hasModelFlags,
  modelsForFile,
  modelsFromOptions,
  type ModelFileKind,
  type NotReady,
} from './model-options.js';
import type { GoalLoopOptionValues, ModelOptionValues } from './options.js';
import { writeErr } from './terminal.js';

/** Config fields a command line may override for one run (the file is not changed). */
export type ConfigOverrides = Partial<Pick<GraphConfig, 'agentName' | 'userName' | 'startNode'>>;

/** How to run the graph. */
export interface RunSetup {
  overrides?: ConfigOverrides;
  /** Lend code nodes the `self` API; default: the graph's `config.selfReferential`. */
  selfReferential?: boolean;
  /**
   * The key of a conversation to resume when the store holds it (for the files, a state file's path: see
   * store/conversation-journal.ts). When the agent had edited its graph, the graph saved there is the one
   * run.
   */
  statePath?: string;
  /** Where the conversation and nested goal runs are kept (see store-for.ts); default: the files. */
  store?: Store;
  /** What `goal_loop` nodes may do (--workspace, --allow, --yes, --goal-max-steps); default: nothing unasked. */
  goalLoop?: GoalLoopOptionValues;
  /**
   * The run will show the full-screen UI, where a download's progress cannot be drawn: an embedded
   * model that is not ready makes its first call fail, saying how to fetch it. Otherwise the first call
   * fetches it. A graph that calls no model fetches nothing either way.
   */
  terminalUi?: boolean;
  /**
   * Say nothing on stderr while opening (the `[scripted]` note, what the file sends where): one of many
   * agents opened for the same run, whose command said it once already.
   */
  quiet?: boolean;
}

/** A graph ready to run. Dispose the interpreter when done. */
export interface OpenedAgent {
  /** The graph file as loaded, with the overrides applied. */
  file: GraphFile;
  /** What the run reads and, in self-referential mode, edits. */
  graph: GraphView;
  interpreter: Interpreter;
  /** Every event of the run: interpreter steps, graph edits and metered model calls. */
  bus: EventBus;
  meter: UsageMeter;
  /** Where the conversation is saved, and nested goal runs are. */
  store: Store;
  /** The conversation read from `statePath`; undefined when there was none to resume. */
  saved?: ConversationState;
  /** Ends the run's sandbox and stops its MCP servers. */
  dispose(): Promise<void>;
}

/**
 * Opens the graph at `path` and an interpreter for it. When the models answer from a script, a
 * `[scripted]` note goes to stderr, since nothing else in the output says so.
 */
export async function openAgent(
  path: string,
  options: ModelOptionValues,
  setup: RunSetup = {},
): Promise<OpenedAgent> {
  const file = withOverrides((await openGraph(path)).file, setup.overrides ?? {});
  const { statePath } = setup;
  const store = setup.store ?? fileStore();
  const saved = statePath === undefined ? undefined : await store.conversations.load(statePath);
  // A conversation whose agent edited its graph stays in the mode, so its edits keep being saved.
  const selfReferential = setup.selfReferential || saved?.graph !== undefined;
  const graph = conversationGraph(file, saved, {
    ...(selfReferential ? { selfReferential } : {}),
    ...(statePath !== undefined ? { source: statePath } : {}),
  });
  if (saved && statePath !== undefined) checkStateFits(saved, file, graph, statePath);
  const bus = new EventBus();
  const meter = new UsageMeter(bus);
  const notReady = setup.terminalUi ? 'fail-on-first-call' : 'fetch-on-first-call';
  const models = meter.meter(
    await resolveModels(options, file.config.models, notReady, 'graph', setup.quiet),
  );
  if (models.chatbot.answersFrom === 'rules' && !setup.quiet)
    writeErr(`[scripted] the answers come from the rules in ${options.script}, not from a model\n`);
  const mcp = await mcpServersFor(setup.goalLoop ?? {});
  const open = agentOpener({
    models,
    events: bus,
    store,
    goalLoop: goalLoopPermissions(setup.goalLoop ?? {}),
    ...(mcp && { mcp }),
    flowModels: async (flow) =>
      meter.meterEach((await flowModels(flow, options, false, { notReady })).nodeModels),
    folder: dirname(resolve(path)),
    onRunFile: (key, node) => writeErr(`[goal_loop] ${node}: the run is saved to ${key} after every step\n`),
    onWarning: (message) => writeErr(`warning: ${message}\n`),
    onNote: (message) => writeErr(`note: ${message}\n`),
  });
  const interpreter = await open({ graph, ...(selfReferential ? { selfReferential } : {}) });
  // The interpreter's graph, not `graph`: in self-referential mode it is the one the edits go to.
  const dispose = async () => {
    interpreter.dispose();
    await mcp?.close();
  };
  return {
    file,
    graph: interpreter.graph,
    interpreter,
    bus,
    meter,
    store,
    ...(saved ? { saved } : {}),
    dispose,
  };
}

/**
 * Refuses a state that cannot go on with the graph of `file` (see stateMismatch): `graph` is what the
 * conversation runs on, which for a self-edited one was restored from the state itself, so the file's
 * name is what the state must match.
 */
function checkStateFits(state: ConversationState, file: GraphFile, graph: GraphView, path: string): void {
  const problem = stateMismatch(state, { name: file.name, get: (name) => graph.get(name) });
  if (problem !== undefined) throw new UserError(`${path} ${problem}`, 2, startOver(path));
}

/** What goal_loop nodes may do, from the user's flags. */
function goalLoopPermissions(given: GoalLoopOptionValues) {
  return {
    ...(given.workspace !== undefined && { workspace: given.workspace }),
    ...(given.allow && { allow: given.allow }),
    ...(given.yes && { yes: true }),
    ...(given.goalMaxSteps !== undefined && { maxSteps: given.goalMaxSteps }),
  };
}

function withOverrides(file: GraphFile, overrides: ConfigOverrides): GraphFile {
  const start = overrides.startNode;
  if (start !== undefined && !file.nodes.some((node) => node.name === start)) {
    const names = file.nodes.map((node) => node.name);
    const guess = closestName(start, names);
    throw new UserError(
      `--start: the graph has no node "${start}"${guess ? `; did you mean "${guess}"?` : ''}`,
      2,
      `nodes: ${names.join(', ')}`,
    );
  }
  const set = Object.fromEntries(Object.entries(overrides).filter(([, value]) => value !== undefined));
  return { ...file, config: { ...file.config, ...set } };
}

/**
 * The models the flags, the environment and the graph's config name. When no model flag was given and
 * none can be resolved (no server configured or found), the error is kept for the first model call
 * instead: a graph of code and exact-text nodes runs without any model, and one that needs a model
 * still fails with the same message, naming the node that needed it.
 */
export async function resolveModels(
  options: ModelOptionValues,
  config: GraphFile['config']['models'] | undefined,
  notReady: NotReady,
  kind: ModelFileKind = 'graph',
  quiet = false,
): Promise<ModelSet> {
  try {
    const setup = { notReady };
    return (
      quiet
        ? await modelsFromOptions(options, config, setup)
        : await modelsForFile(options, config, kind, setup)
    ).models;
  } catch (error) {
    if (!isUserError(error) || hasModelFlags(options)) throw error;
    return unavailableModels(error);
  }
}
