import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Interpreter } from '../../src/engine/interpreter.js';
import { conversationGraph } from '../../src/engine/self-mode.js';
import { loadState, saveState, type ConversationState } from '../../src/engine/state.js';
import { EventBus, type AgentEvent } from '../../src/events.js';
import { lintGraph } from '../../src/aipl/lint.js';
import { loadGraphFile } from '../../src/graph/load.js';
import type { GraphFile } from '../../src/graph/schema.js';
import { VersionedGraph } from '../../src/graph/versioned.js';
import { OpenAIModel } from '../../src/llm/openai.js';
import type { ModelSet } from '../../src/llm/types.js';
import { everyRole } from '../support/agents.js';
import { startOpenAIServer, type OpenAIServer } from '../support/openai-server.js';

const AGENT = fileURLToPath(new URL('../../meta/self-referential.autogram.json', import.meta.url));
const DESIGNED = 13;

/** What the model answers, turn by turn: the instruction, the names it tries, the new node's reply. */
const TURNS = [
  {
    user: 'hello there',
    answers: [
      'Respond to the user and greet them warmly.',
      'Greet User',
      'greet_user',
      'Hello! Nice to meet you.',
    ],
    node: 'greet_user',
  },
  {
    user: 'what is the weather like?',
    answers: [
      'Respond to the user and tell them you cannot see the weather.',
      'greet_user',
      'weather_answer',
      'I cannot see the weather from here, sorry.',
    ],
    node: 'weather_answer',
  },
  {
    user: 'tell me a joke',
    answers: ['Respond to the user with a short joke.', 'tell_joke', 'Why did the node cross the graph?'],
    node: 'tell_joke',
  },
];

describe('the Appendix H agent (meta/self-referential.autogram.json)', () => {
  let server: OpenAIServer;
  let models: ModelSet;
  let file: GraphFile;
  beforeAll(async () => {
    server = await startOpenAIServer();
    const model = new OpenAIModel({ baseUrl: server.url, model: 'gpt-4o-mini', maxRetries: 0 });
    models = everyRole(model);
    ({ file } = await loadGraphFile(AGENT));
  });
  afterAll(() => server.close());

  /** One turn by a new interpreter that knows the conversation only from its saved JSON. */
  async function turn(saved: string | undefined, user: string | undefined, events?: EventBus) {
    const state = saved === undefined ? undefined : loadState(saved);
    const graph = conversationGraph(file, state);
    const agent = await Interpreter.create({ graph, models, ...(events ? { events } : {}) });
    try {
      const result = await agent.reply(user, state);
      return { ...result, graph, saved: saveState(result.state) };
    } finally {
      agent.dispose();
    }
  }

  it('ships as a graph without lint findings', () => {
    expect(lintGraph(file)).toEqual([]);
  });

  it('designs, adds and runs one new node per turn, resuming from the saved state each time', async () => {
    const opening = await turn(undefined, undefined);
    expect(opening.reply).toBe('Hi there, what can I help you with?');
    expect(opening.graph.nodes()).toHaveLength(DESIGNED);

    let saved = opening.saved;
    const edits: AgentEvent[] = [];
    for (const [i, step] of TURNS.entries()) {
      server.enqueue(...step.answers);
      const before = server.chatRequests().length;
      const bus = new EventBus();
      bus.on((event) => event.type === 'graph.edited' && edits.push(event));
      const result = await turn(saved, step.user, bus);
      saved = result.saved;

      expect(result.reply).toBe(step.answers.at(-1));
      const graph = result.graph as VersionedGraph;
      expect(graph.nodes()).toHaveLength(DESIGNED + i + 1);
      expect(graph.get(step.node)).toMatchObject({
        action: 'chat',
        instruction: step.answers[0],
        transitions: ['dynamic_node'],
      });
      expect(graph.history().at(-1)).toMatchObject({ version: i + 1, by: '_add_new_node_node8', op: 'add' });
      expect(result.state.current).toBe(step.node);
      expect(result.state.graph).toEqual(graph.toJSON());

      // The design thought and the new node's reply both see what the user just said.
      const requests = server.chatRequests().slice(before);
      expect(requests).toHaveLength(step.answers.length);
      expect(JSON.stringify(requests[0]!.messages)).toContain(step.user);
      expect(JSON.stringify(requests.at(-1)!.messages)).toContain(step.user);
      expect(requests.at(-1)!.messages.at(-1)!.content).toContain(step.answers[0]);
    }
    expect(edits).toEqual(
      TURNS.map((step, i) => ({
        type: 'graph.edited',
        version: i + 1,
        by: '_add_new_node_node8',
        op: 'add',
        nodes: [step.node],
        totalNodes: DESIGNED + i + 1,
      })),
    );
    const state: ConversationState = loadState(saved);
    const final = VersionedGraph.fromJSON(state.graph);
    expect(final.history().map((r) => r.name)).toEqual(TURNS.map((t) => t.node));

    // Turn 1 asked again after an invalid name, turn 2 after a taken one, turn 3 took its first name.
    const prompts = server.chatRequests().map((r) => r.messages.at(-1)!.content);
    expect(prompts.filter((p) => p.includes('The last name was invalid'))).toHaveLength(2);
  });
});
