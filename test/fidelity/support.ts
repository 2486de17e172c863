/**
 * What the AutoGRAMS fidelity tests share: spreadsheets read as a user's file would be, and scripted
 * models that record every request, so a test can check the prompts meta-agent sends against the ones
 * the reference (`../shared/reference/autograms-243158a/`) forms.
 */
import { Interpreter } from '../../src/engine/interpreter.js';
import { seededRandom, simulateConversations, type SimulationReport } from '../../src/engine/simulate.js';
import type { ConversationState } from '../../src/engine/state.js';
import { EventBus, type AgentEvent } from '../../src/events.js';
import { graphFromCsv } from '../../src/graph/csv.js';
import { StaticGraph, type GraphView } from '../../src/graph/view.js';
import { Script, ScriptedModel, type ScriptFile } from '../../src/llm/scripted.js';
import type { ChatMessage, CompletionRequest, ModelRole, ModelSet } from '../../src/llm/types.js';

/** A spreadsheet's text as a graph, read the way `meta-agent chat agent.csv` reads it. */
export function csvGraph(text: string, name = 'agent'): StaticGraph {
  return new StaticGraph(graphFromCsv(text, { name, source: `${name}.csv` }).file);
}

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
  const shared = new Script(script, 'fidelity-script');
  const calls: RecordedCall[] = [];
  const model = (role: ModelRole) => new RecordingModel(shared, role, calls, modelName);
  return {
    models: {
      chatbot: model('chatbot'),
      classifier: model('classifier'),
      userbot: model('userbot'),
      embedder: model('embedder'),
    },
    calls,
  };
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
 * with answers from `script`.
 */
export async function converse(
  graph: GraphView,
  script: ScriptFile,
  replies: (string | undefined)[],
): Promise<Conversation> {
  const { models, calls } = recordingModels(script);
  const events: AgentEvent[] = [];
  const bus = new EventBus();
  bus.on((event) => events.push(event));
  const agent = await Interpreter.create({ graph, models, events: bus });
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

/** The text of every message of the calls one role received, one string a call. */
export function promptsOf(calls: readonly RecordedCall[], role: ModelRole): string[] {
  return calls.filter((c) => c.role === role).map((c) => c.messages.map((m) => m.content).join('\n\n'));
}
