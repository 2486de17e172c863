/**
 * What `chat`, `call` and `simulate` share before they run a graph: open and lint the file with the
 * command-line config overrides, choose the graph the run edits or reads (self-referential mode, a
 * resumed conversation), resolve the models (metered, so every call is an event) and create the
 * interpreter on one event bus, lending it the goal loop (`goals`, which `goal_loop` nodes run) and
 * flows (`flows`, which `flow` nodes run).
 */
import { goalLoopHost } from '../autonomous/nested-run.js';
import { dirname, resolve } from 'node:path';
import { flowHost } from '../flow/nested.js';
import { FLOWS_NAMESPACE, GOALS_NAMESPACE, MEMORY_NAMESPACE } from '../engine/actions.js';
import { Interpreter } from '../engine/interpreter.js';
import { conversationGraph } from '../engine/self-mode.js';
import type { ConversationState } from '../engine/state.js';
import { UserError, isUserError } from '../errors.js';
import { EventBus } from '../events.js';
import { closestName } from '../graph/names.js';
import type { GraphConfig, GraphFile } from '../graph/schema.js';
import type { GraphView } from '../graph/view.js';
import { TEXT_ONLY, type LanguageModel, type ModelSet } from '../llm/types.js';
import { UsageMeter } from '../llm/usage.js';
import { openGraph } from './load-graph.js';
import { hasModelFlags, modelsForFile, type NotReady } from './model-options.js';
import type { GoalLoopOptionValues, ModelOptionValues } from './options.js';
import { checkStateFits, loadStateFile } from './state-file.js';
import { writeErr } from './terminal.js';

/** Config fields a command line may override for one run (the file is not changed). */
export type ConfigOverrides = Partial<Pick<GraphConfig, 'agentName' | 'userName' | 'startNode'>>;

/** How to run the graph. */
export interface RunSetup {
  overrides?: ConfigOverrides;
  /** Lend code nodes the `self` API; default: the graph's `config.selfReferential`. */
  selfReferential?: boolean;
  /**
   * A state file to resume when it exists (see state-file.ts). When the agent had edited its graph,
   * the graph saved there is the one run.
   */
  statePath?: string;
  /** What `goal_loop` nodes may do (--workspace, --allow, --yes, --goal-max-steps); default: nothing unasked. */
  goalLoop?: GoalLoopOptionValues;
  /**
   * The run will show the full-screen UI, where a download's progress cannot be drawn: an embedded
   * model that is not ready makes its first call fail, saying how to fetch it. Otherwise the first call
   * fetches it. A graph that calls no model fetches nothing either way.
   */
  terminalUi?: boolean;
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
  /** The conversation read from `statePath`; undefined when there was none to resume. */
  saved?: ConversationState;
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
  const saved = statePath === undefined ? undefined : await loadStateFile(statePath);
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
  const models = meter.meter(await resolveModels(options, file, notReady));
  if (models.chatbot.answersFrom === 'rules')
    writeErr(`[scripted] the answers come from the rules in ${options.script}, not from a model\n`);
  const memory = file.config.memory && (await memoryOf(file, models, setup.goalLoop?.workspace));
  const interpreter = await Interpreter.create({
    graph,
    models,
    events: bus,
    host: {
      [GOALS_NAMESPACE]: await goalLoopHost({
        ...goalLoopOptions(graph, models, bus, setup.goalLoop ?? {}),
        ...(memory && { memory: memory.open }),
      }),
      ...(memory && { [MEMORY_NAMESPACE]: memory.host }),
      [FLOWS_NAMESPACE]: flowHost({ folder: dirname(resolve(path)), model: models.chatbot, events: bus }),
    },
    ...(selfReferential ? { selfReferential } : {}),
  });
  // The interpreter's graph, not `graph`: in self-referential mode it is the one the edits go to.
  return { file, graph: interpreter.graph, interpreter, bus, meter, ...(saved ? { saved } : {}) };
}

/**
 * The long-term memory of a graph whose config asks for it, in the goal loop's workspace: one store,
 * opened on first use, for its code nodes and its goal_loop nodes alike. Loaded only for such graphs.
 */
async function memoryOf(file: GraphFile, models: ModelSet, workspace = 'workspace') {
  const [{ memoryHost, openMemory }, { agentNamespace }] = await Promise.all([
    import('../autonomous/memory.js'),
    import('../../memory/namespaces.js'),
  ]);
  let store: ReturnType<typeof openMemory> | undefined;
  const open = () =>
    (store ??= openMemory({
      workspace: resolve(workspace),
      namespace: file.config.memory?.namespace ?? agentNamespace(file.name),
      embedder: models.embedder,
      onNotice: (message) => writeErr(`note: ${message}\n`),
    }));
  return { open, host: memoryHost(open) };
}

/** The goal loop lent to the graph: the user's permissions and budget, the run's models and events. */
function goalLoopOptions(graph: GraphView, models: ModelSet, events: EventBus, given: GoalLoopOptionValues) {
  return {
    graph,
    models,
    events,
    ...(given.workspace !== undefined && { workspace: given.workspace }),
    ...(given.allow && { allow: given.allow }),
    ...(given.yes && { yes: true }),
    ...(given.goalMaxSteps !== undefined && { maxSteps: given.goalMaxSteps }),
    onRunFile: (path: string, node: string) =>
      writeErr(`[goal_loop] ${node}: the run is saved to ${path} after every step\n`),
    onWarning: (message: string) => writeErr(`warning: ${message}\n`),
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
async function resolveModels(
  options: ModelOptionValues,
  file: GraphFile,
  notReady: NotReady,
): Promise<ModelSet> {
  try {
    return (await modelsForFile(options, file.config.models, 'graph', { notReady })).models;
  } catch (error) {
    if (!isUserError(error) || hasModelFlags(options)) throw error;
    return unavailableModels(error);
  }
}

/** Models that answer every call with `error`. */
function unavailableModels(error: UserError): ModelSet {
  const fail = () => Promise.reject(error);
  const model: LanguageModel = {
    id: 'unavailable',
    modelName: 'unavailable',
    capabilities: TEXT_ONLY,
    answersFrom: 'model',
    complete: fail,
    stream: fail,
    embed: fail,
  };
  return { chatbot: model, classifier: model, userbot: model, embedder: model };
}
