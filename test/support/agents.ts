/**
 * What the tests that run agents share: graphs (from node lists, fixture files or spreadsheets), model
 * sets (silent, scripted, or recording what they were sent), and drivers that hold conversations and
 * simulations and dispose the interpreter after. The fidelity tests check the recorded prompts against
 * the ones the reference (`../shared/reference/autograms-243158a/`) forms.
 *
 * Child processes import this module too (through test/engine/ts-register.mjs), so it stays free of
 * vitest.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Interpreter, type InterpreterOptions } from '../../src/engine/interpreter.js';
import { seededRandom, simulateConversations, type SimulationReport } from '../../src/engine/simulate.js';
import type { ConversationState } from '../../src/engine/state.js';
import { EventBus, type AgentEvent } from '../../src/events.js';
import { graphFromCsv } from '../../src/graph/csv.js';
import {
  graphFileSchema,
  type GraphConfig,
  type GraphFile,
  type NodeSpecInput,
} from '../../src/graph/schema.js';
import { StaticGraph, type GraphView } from '../../src/graph/view.js';
import { Script, ScriptedModel, type ScriptFile } from '../../src/llm/scripted.js';
import type {
  ChatMessage,
  CompletionRequest,
  LanguageModel,
  ModelRole,
  ModelSet,
} from '../../src/llm/types.js';

// Graphs

/** A graph file of `nodes` with `config` over the defaults. */
export function fileOf(nodes: NodeSpecInput[], config: Partial<GraphConfig> = {}, name = 'test'): GraphFile {
  return graphFileSchema.parse({ name, nodes, config });
}

/** A static graph of `nodes` with `config` over the defaults. */
export function graphOf(
  nodes: NodeSpecInput[],
  config: Partial<GraphConfig> = {},
  name = 'test',
): StaticGraph {
  return new StaticGraph(fileOf(nodes, config, name));
}

/** A graph fixture from test/fixtures/engine/NAME.autogram.json. */
export function fixture(name: string): StaticGraph {
  const path = fileURLToPath(new URL(`../fixtures/engine/${name}.autogram.json`, import.meta.url));
  return new StaticGraph(graphFileSchema.parse(JSON.parse(readFileSync(path, 'utf8'))));
}

/** A spreadsheet's text as a graph, read the way `meta-agent chat agent.csv` reads it. */
export function csvGraph(text: string, name = 'agent'): StaticGraph {
  return new StaticGraph(graphFromCsv(text, { name, source: `${name}.csv` }).file);
}

// Models

function perRole(model: (role: ModelRole) => LanguageModel): ModelSet {
  return {
    chatbot: model('chatbot'),
    classifier: model('classifier'),
    userbot: model('userbot'),
    embedder: model('embedder'),
  };
}

/** `model` in every role, as the command line sets a single server up. */
export function everyRole(model: LanguageModel): ModelSet {
  return perRole(() => model);
}

/** One scripted model per role sharing `script` (rules match against the joined prompt text). */
export function scriptedModels(script: ScriptFile): ModelSet {
  const shared = new Script(script, 'test-script');
  return perRole((role) => new ScriptedModel(shared, role));
}

/** A script without rules: any model call fails with the prompt it got. */
export const noScript: ScriptFile = { rules: [] };

/** Models for graphs that never call one: any call fails the test with the prompt it got. */
export const noModels: ModelSet = scriptedModels(noScript);

/** One request a model received. */
export interface RecordedCall {
  role: ModelRole;
  messages: ChatMessage[];
  request: CompletionRequest;
}

/** A scripted model that records each request before answering it. */
class RecordingModel extends ScriptedModel {
  constructor(
    script: Script,
    role: ModelRole,
    private readonly calls: RecordedCall[],
    override readonly modelName: string,
  ) {
    super(script, role);
  }

  override complete(request: CompletionRequest) {
    this.calls.push({ role: this.role, messages: request.messages, request });
    return super.complete(request);
  }
}

/**
 * Scripted models (one script shared by every role) that record what each call sent. `modelName`
 * stands in for the server's model name, which decides whether classifier calls carry a logit bias.
 */
export function recordingModels(
  script: ScriptFile,
  modelName = 'scripted',
): { models: ModelSet; calls: RecordedCall[] } {
  const shared = new Script(script, 'test-script');
  const calls: RecordedCall[] = [];
  return { models: perRole((role) => new RecordingModel(shared, role, calls, modelName)), calls };
}

/** The text of every message of the calls one role received, one string a call. */
export function promptsOf(calls: readonly RecordedCall[], role: ModelRole): string[] {
  return calls.filter((c) => c.role === role).map((c) => c.messages.map((m) => m.content).join('\n\n'));
}

// Conversations

/** An interpreter over `nodes` with scripted models, recording its events; disposed after `body`. */
export async function withAgent(
  nodes: NodeSpecInput[],
  script: ScriptFile,
  body: (agent: Interpreter, events: AgentEvent[]) => Promise<void>,
  config: Partial<GraphConfig> = {},
): Promise<void> {
  const bus = new EventBus();
  const events: AgentEvent[] = [];
  bus.on((e) => events.push(e));
  const agent = await Interpreter.create({
    graph: graphOf(nodes, config),
    models: scriptedModels(script),
    events: bus,
  });
  try {
    await body(agent, events);
  } finally {
    agent.dispose();
  }
}

/** What a conversation produced. */
export interface Conversation {
  said: string[];
  state: ConversationState;
  calls: RecordedCall[];
  events: AgentEvent[];
  /** The nodes entered, in order (from the `node.entered` events). */
  entered: string[];
}

/**
 * Talks to `graph`: each entry of `replies` is one user reply (undefined lets the agent speak first),
 * with answers from `script`; `options` go to the interpreter.
 */
export async function converse(
  graph: GraphView,
  script: ScriptFile,
  replies: (string | undefined)[],
  options: Omit<InterpreterOptions, 'graph' | 'models' | 'events'> = {},
): Promise<Conversation> {
  const { models, calls } = recordingModels(script);
  const events: AgentEvent[] = [];
  const bus = new EventBus();
  bus.on((event) => events.push(event));
  const agent = await Interpreter.create({ ...options, graph, models, events: bus });
  try {
    const said: string[] = [];
    let state: ConversationState | undefined;
    for (const text of replies) {
      const result = await agent.reply(text, state);
      said.push(result.reply);
      state = result.state;
    }
    const entered = events.flatMap((event) => (event.type === 'node.entered' ? [event.node] : []));
    return { said, state: state!, calls, events, entered };
  } finally {
    agent.dispose();
  }
}

/** Simulates `count` conversations of up to `turns` user replies with `graph`, seeded with `seed`. */
export async function simulate(
  graph: GraphView,
  script: ScriptFile,
  options: { count: number; turns: number; seed: number },
): Promise<{ report: SimulationReport; calls: RecordedCall[] }> {
  const { models, calls } = recordingModels(script);
  const agent = await Interpreter.create({ graph, models });
  try {
    const report = await simulateConversations(agent, { ...options, rng: seededRandom(options.seed) });
    return { report, calls };
  } finally {
    agent.dispose();
  }
}
