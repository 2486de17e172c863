import { afterEach, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events.js';
import { EventBus } from '../../src/events.js';
import { OpenAIModel } from '../../src/llm/openai.js';
import { ScriptedModel, Script } from '../../src/llm/scripted.js';
import { costOf, formatUsage, priceOf, UsageMeter } from '../../src/llm/usage.js';
import { startOpenAIServer } from '../support/openai-server.js';
import type { OpenAIServer } from '../support/openai-server.js';

let server: OpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const hello = { messages: [{ role: 'user' as const, content: 'hi' }], purpose: 'node greet' };

describe('prices', () => {
  it('prices dated OpenAI model names by their family', () => {
    expect(priceOf('gpt-4o-mini-2024-07-18')).toEqual({ input: 0.15, output: 0.6 });
    expect(priceOf('gpt-4o')).toEqual({ input: 2.5, output: 10 });
    expect(costOf('gpt-4o-mini', { promptTokens: 1_000_000, completionTokens: 1_000_000 })).toBeCloseTo(0.75);
  });

  it('treats local model names as free', () => {
    expect(priceOf('llama3.2:3b')).toBeUndefined();
    expect(costOf('qwen2.5', { promptTokens: 100, completionTokens: 100 })).toBeUndefined();
  });
});

describe('UsageMeter', () => {
  it('counts calls and tokens per role and emits a model.call event for each', async () => {
    server = await startOpenAIServer({
      answers: [
        { text: 'Hi!', usage: { promptTokens: 1000, completionTokens: 200 } },
        { text: 'A', usage: { promptTokens: 50, completionTokens: 1 } },
      ],
    });
    const bus = new EventBus();
    const events: AgentEvent[] = [];
    bus.on((event) => events.push(event));
    const meter = new UsageMeter(bus);
    const model = new OpenAIModel({ baseUrl: server.url, model: 'gpt-4o-mini' });
    const chatbot = meter.wrap('chatbot', model);
    const classifier = meter.wrap('classifier', model);
    await chatbot.complete(hello);
    await classifier.complete({ ...hello, purpose: 'transition from greet' });

    expect(chatbot.id).toBe(model.id);
    expect(meter.byRole().chatbot).toMatchObject({
      calls: 1,
      promptTokens: 1000,
      completionTokens: 200,
      local: false,
    });
    expect(meter.byRole().classifier).toMatchObject({ calls: 1, promptTokens: 50, completionTokens: 1 });
    expect(meter.total()).toMatchObject({
      calls: 2,
      promptTokens: 1050,
      completionTokens: 201,
      local: false,
    });
    expect(meter.total().costUsd).toBeCloseTo((1050 * 0.15 + 201 * 0.6) / 1e6, 10);
    expect(events).toMatchObject([
      { type: 'model.call', role: 'chatbot', model: 'gpt-4o-mini', purpose: 'node greet', scripted: false },
      {
        type: 'model.call',
        role: 'classifier',
        purpose: 'transition from greet',
        usage: { promptTokens: 50, completionTokens: 1 },
      },
    ]);
    // The event carries the cost the totals add up: the TUI and the trace read it from there.
    const costs = events.map((event) => (event.type === 'model.call' ? event.costUsd : undefined));
    expect(costs[0]! + costs[1]!).toBeCloseTo(meter.total().costUsd, 12);
  });

  it('emits the pieces of a stream as model.delta events before the model.call', async () => {
    server = await startOpenAIServer({ answers: ['Hello there friend'] });
    const bus = new EventBus();
    const events: AgentEvent[] = [];
    bus.on((event) => events.push(event));
    const meter = new UsageMeter(bus);
    const chatbot = meter.wrap('chatbot', new OpenAIModel({ baseUrl: server.url, model: 'gpt-4o-mini' }));
    const seen: string[] = [];
    await chatbot.stream(hello, (chunk) => seen.push(chunk.delta));
    expect(seen).toEqual(['Hello ', 'there ', 'friend']);
    expect(events.map((event) => event.type)).toEqual([
      'model.delta',
      'model.delta',
      'model.delta',
      'model.call',
    ]);
    expect(events[0]).toEqual({
      type: 'model.delta',
      role: 'chatbot',
      purpose: 'node greet',
      delta: 'Hello ',
    });
  });

  it('shows scripted and local runs as local, at no cost', async () => {
    const meter = new UsageMeter();
    const scripted = meter.wrap(
      'chatbot',
      new ScriptedModel(new Script({ rules: [], default: 'ok' }, 'inline'), 'chatbot'),
    );
    await scripted.complete(hello);
    await scripted.embed(['a', 'b']);
    const total = meter.total();
    expect(total).toMatchObject({ calls: 2, costUsd: 0, local: true });
    expect(formatUsage(total)).toMatch(/^2 calls · \d+ in \/ \d+ out tokens · local · \d+\.\d s$/);
  });

  it('formats priced usage with dollars and thousands separators', () => {
    const line = formatUsage({
      calls: 1,
      promptTokens: 12345,
      completionTokens: 678,
      ms: 1500,
      costUsd: 0.0123,
      local: false,
    });
    expect(line).toBe('1 call · 12,345 in / 678 out tokens · $0.01 · 1.5 s');
  });
});
