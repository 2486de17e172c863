import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Interpreter } from '../../src/engine/interpreter.js';
import { conversationGraph } from '../../src/engine/self-mode.js';
import type { ConversationState } from '../../src/engine/state.js';
import { loadGraphFile } from '../../src/graph/load.js';
import { lintGraph } from '../../src/aipl/lint.js';
import type { VersionedGraph } from '../../src/graph/versioned.js';
import { OpenAIModel } from '../../src/llm/openai.js';
import { everyRole } from '../support/agents.js';
import { startOpenAIServer, type ChatRequestBody, type OpenAIServer } from '../support/openai-server.js';

const AGENT = fileURLToPath(new URL('../../meta/self-improving.autogram.json', import.meta.url));

/** The classifier's verdicts, in the order the questions come; the chatbot answers by the instruction it got. */
let verdicts: string[] = [];

function answer(body: ChatRequestBody): string {
  const last = body.messages.at(-1)?.content ?? '';
  if (body.max_tokens === 1) {
    const verdict = verdicts.shift();
    if (!verdict) throw new Error(`no verdict left for: ${last.slice(-200)}`);
    return verdict;
  }
  if (last.includes('Write a better instruction')) return 'Answer the user in words, never in digits.';
  if (last.includes('Answer the user in words, never in digits.')) return 'Four.';
  if (last.includes('Answer the user')) return '4';
  if (last.includes('what kind of message is it')) return 'Travel $booking = request';
  if (last.includes('Write an instruction for replying'))
    return 'Say that you cannot book travel, and name a booking site.';
  if (last.includes('Say that you cannot book travel')) return 'I cannot book travel; try a booking site.';
  throw new Error(`no answer for: ${last.slice(-200)}`);
}

describe('the self-improving agent (meta/self-improving.autogram.json)', () => {
  let server: OpenAIServer;
  let agent: Interpreter;
  let graph: VersionedGraph;
  beforeAll(async () => {
    server = await startOpenAIServer({ reply: answer });
    const model = new OpenAIModel({ baseUrl: server.url, model: 'gpt-4o-mini', maxRetries: 0 });
    const { file } = await loadGraphFile(AGENT);
    graph = conversationGraph(file, undefined) as VersionedGraph;
    agent = await Interpreter.create({
      graph,
      models: everyRole(model),
    });
  });
  afterAll(async () => {
    agent.dispose();
    await server.close();
  });

  it('ships as a graph without lint findings', async () => {
    const { file } = await loadGraphFile(AGENT);
    expect(lintGraph(file)).toEqual([]);
  });

  it('answers as designed while its replies serve the user, rewrites a reply that did not, and learns a new kind of message', async () => {
    let state: ConversationState;
    const say = async (text: string | undefined, ...classifier: string[]) => {
      verdicts = classifier;
      const result = await agent.reply(text, state);
      expect(verdicts).toEqual([]);
      state = result.state;
      return result.reply;
    };

    expect(await say(undefined)).toBe('Hello! What can I help you with today?');
    // Judged fine (A), routed as a request (B): the designed answer.
    expect(await say('What is 2 + 2?', 'A', 'B')).toBe('4');
    expect(graph.version).toBe(0);

    // Judged as missing the point (B): the instruction of the node that replied is rewritten, then used.
    expect(await say('I wanted the answer in words', 'B')).toBe('Four.');
    expect(graph.get('answer')?.instruction).toBe('Answer the user in words, never in digits.');
    expect(graph.history().at(-1)).toMatchObject({ version: 1, by: 'rewrite', op: 'update', name: 'answer' });

    // Judged as a kind of message nothing handles (C): a node and a route to it are added, then used.
    expect(await say('Book me a flight to Rome', 'C')).toBe('I cannot book travel; try a booking site.');
    const added = graph.get('travel_booking_request');
    expect(added).toMatchObject({ action: 'chat', transitions: ['review'] });
    expect(graph.get('route')).toMatchObject({
      transitions: ['small_talk', 'answer', 'travel_booking_request'],
      transitionChoices: [
        'A greeting or small talk',
        'A question or a request',
        'A message of this kind: Travel \\$booking = request',
      ],
    });
    expect(graph.history().map((r) => [r.by, r.op, r.name])).toEqual([
      ['rewrite', 'update', 'answer'],
      ['add_case', 'add', 'travel_booking_request'],
      ['add_case', 'add-transition', 'route'],
    ]);

    // The next message of that kind is routed (C) to the node it learned.
    expect(await say('And a hotel there?', 'A', 'C')).toBe('I cannot book travel; try a booking site.');
    const routing = server
      .chatRequests()
      .filter((r) => r.max_tokens === 1)
      .at(-1)!;
    expect(routing.messages.at(-1)!.content).toContain(
      'C. A message of this kind: Travel $booking = request',
    );
    expect(state!.graph).toEqual(graph.toJSON());
  });
});
