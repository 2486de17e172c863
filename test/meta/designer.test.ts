import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { designAgent, type DesignOutcome, type DesignRequest } from '../../meta/design.js';
import { agentOpener } from '../../src/agent/open.js';
import { Interpreter } from '../../src/engine/interpreter.js';
import { EventBus, type AgentEvent } from '../../src/events.js';
import { lintGraph } from '../../src/aipl/lint.js';
import { hasErrors } from '../../src/graph/lint.js';
import { loadGraphFile } from '../../src/graph/load.js';
import { StaticGraph } from '../../src/graph/view.js';
import { OpenAIModel } from '../../src/llm/openai.js';
import type { ModelSet } from '../../src/llm/types.js';
import { inMemoryStore } from '../../src/store/in-memory.js';
import {
  cooperativeDesigner,
  fieldsAnswer,
  fieldsRequests,
  inWaves,
  isBatch,
  lastMessage,
  promptKind,
} from '../fixtures/design/replies.js';
import {
  startOpenAIServer,
  type ChatAnswer,
  type ChatRequestBody,
  type OpenAIServer,
} from '../support/openai-server.js';

let server: OpenAIServer | undefined;
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'designer-'));
});

afterEach(async () => {
  await server?.close();
  server = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** Starts the loopback server with `reply` and designs through the real OpenAI client. */
async function design(
  reply: (body: ChatRequestBody) => ChatAnswer | Promise<ChatAnswer>,
  request: Partial<DesignRequest> = {},
): Promise<{ outcome: DesignOutcome; events: AgentEvent[]; models: ModelSet }> {
  server = await startOpenAIServer({ reply });
  const model = new OpenAIModel({ baseUrl: server.url, model: 'gpt-4o-mini', maxRetries: 0 });
  const models: ModelSet = { chatbot: model, classifier: model, userbot: model, embedder: model };
  const bus = new EventBus();
  const events: AgentEvent[] = [];
  bus.on((e) => events.push(e));
  const outcome = await designAgent({
    description: 'a tutor bot that teaches a lesson part by part',
    name: 'tutor',
    outDir: dir,
    models,
    open: agentOpener({ models, events: bus, store: inMemoryStore(), folder: dir }),
    events: bus,
    ...request,
  });
  return { outcome, events, models };
}

/** True when a fields prompt asks for `node` (alone or in a batch). */
function asksFor(body: ChatRequestBody, node: string): boolean {
  return fieldsRequests(body).some((asked) => asked.node === node);
}

/** The nodes each fields request asked for, sorted: concurrent requests arrive in any order. */
function askedNodes(): string[][] {
  return server!
    .chatRequests()
    .filter((body) => promptKind(body) === 'fields')
    .map((body) => fieldsRequests(body).map((asked) => asked.node))
    .sort((a, b) => a.join().localeCompare(b.join()));
}

function kinds(): string[] {
  return server!.chatRequests().map(promptKind);
}

function stageLines(events: AgentEvent[]): string[] {
  return events.flatMap((e) =>
    e.type === 'design.stage' && e.status !== 'progress' ? [`${e.stage} ${e.status}`] : [],
  );
}

/** The cooperative designer, with the first `count` answers of one prompt kind replaced. */
function withFirst(kind: string, answers: ChatAnswer[]): (body: ChatRequestBody) => ChatAnswer {
  const base = cooperativeDesigner(5);
  const queue = [...answers];
  return (body) => (promptKind(body) === kind && queue.length > 0 ? queue.shift()! : base(body));
}

describe('the designer', () => {
  it('designs a graph that validates and chats, with every node written in one round of concurrent calls', async () => {
    // The server answers the node calls only once all six are waiting: they must be made together.
    const waves = inWaves(6, cooperativeDesigner(6));
    const { outcome, events, models } = await design(waves.reply);
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;

    expect(waves.stalls()).toBe(0);
    expect(kinds()).toEqual(['outline', 'dot', ...Array(6).fill('fields')]);
    expect(server!.maxInFlight).toBe(6);
    expect(outcome.figures).toMatchObject({ calls: 8, roundTrips: 3, scripted: false });
    expect(outcome.figures.usage.promptTokens).toBeGreaterThan(0);

    for (const path of Object.values(outcome.saved)) expect(existsSync(path)).toBe(true);
    const { file } = await loadGraphFile(outcome.saved.graph);
    expect(hasErrors(lintGraph(file))).toBe(false);
    expect(file.config.startNode).toBe('start');
    expect(file.nodes.map((n) => n.name)).toEqual([
      'start',
      'step_1',
      'step_2',
      'step_3',
      'step_4',
      'goodbye',
    ]);
    expect(file.nodes.at(-1)!.transitions).toEqual(['quit']);
    expect(file.nodes[0]).toMatchObject({
      transitions: ['step_1', 'step_2'],
      transitionQuestion: 'How did the user reply at start?',
      transitionChoices: ['reply way 1 at start', 'reply way 2 at start'],
    });
    expect(await readFile(outcome.saved.svg, 'utf8')).toContain('<svg');

    const chat = await Interpreter.create({ graph: new StaticGraph(file), models });
    try {
      const opening = await chat.reply(undefined);
      expect(opening.reply).toBe('Let us look at the next part of the lesson.');
    } finally {
      chat.dispose();
    }

    // The outline streamed once, piece by piece, as the model wrote it.
    const outlineText = events
      .flatMap((e) => (e.type === 'model.delta' && e.purpose === 'node write_outline' ? [e.delta] : []))
      .join('');
    expect(outlineText).toBe(outcome.outline);

    expect(stageLines(events)).toEqual([
      'outline start',
      'outline done',
      'dot start',
      'dot done',
      'fields start',
      'fields done',
      'assemble start',
      'assemble done',
      'lint start',
      'lint done',
      'save start',
      'save done',
    ]);
  });

  it('sends broken DOT back with Graphviz’s complaint and uses the redrawn graph', async () => {
    const broken = '```dot\ndigraph tutor {\n  start [label="Greet"];\n  start -> -> step_1;\n}\n```';
    const { outcome, events } = await design(withFirst('dot', [broken]));
    expect(outcome.ok).toBe(true);
    expect(kinds().slice(0, 3)).toEqual(['outline', 'dot', 'redraw']);
    const redraw = server!.chatRequests()[2]!;
    expect(lastMessage(redraw)).toMatch(/line 3: syntax error near '->'/);
    // The redraw sees the outline and its broken draft: the designer's thought turns stay in scope.
    expect(redraw.messages.map((m) => m.content).join('\n')).toContain('start -> -> step_1');
    const retry = events.find((e) => e.type === 'design.stage' && e.status === 'retry');
    expect(retry).toMatchObject({ stage: 'dot', detail: expect.stringMatching(/line 3: syntax error/) });
  });

  it('gives up cleanly when no draft is usable, keeping the outline, the draft and the last answer', async () => {
    const unlabeled = '```dot\ndigraph { start -> a; a -> b; }\n```';
    const base = cooperativeDesigner(5);
    const { outcome, events } = await design((body) =>
      ['dot', 'redraw'].includes(promptKind(body)) ? unlabeled : base(body),
    );
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.stage).toBe('dot');
    expect(outcome.reason).toMatch(/no usable DOT graph after 3 tries; last problem: .*no label/);
    expect(kinds()).toEqual(['outline', 'dot', 'redraw', 'redraw']);
    expect(outcome.kept.map((p) => p.slice(dir.length + 1)).sort()).toEqual([
      'tutor.partial.dot',
      'tutor.partial.json',
      'tutor.partial.last-answer.txt',
      'tutor.partial.outline.md',
    ]);
    expect(await readFile(join(dir, 'tutor.partial.dot'), 'utf8')).toBe('digraph { start -> a; a -> b; }\n');
    expect(await readFile(join(dir, 'tutor.partial.outline.md'), 'utf8')).toContain('Greet the user');
    // The JSON is the designer's work record: what its helpers made, the last draft's problems included.
    expect(JSON.parse(await readFile(join(dir, 'tutor.partial.json'), 'utf8'))).toMatchObject({
      outline: expect.stringContaining('Greet the user'),
      dot: { problems: expect.arrayContaining([expect.stringMatching(/no label/)]) },
    });
    expect(existsSync(join(dir, 'tutor.autogram.json'))).toBe(false);
    expect(events.at(-1)).toMatchObject({ type: 'design.stage', stage: 'dot', status: 'fail' });
  });

  it('stops when its signal aborts, keeping the DOT draft, and the calls it leaves behind end quietly', async () => {
    const base = cooperativeDesigner(5);
    const interrupt = new AbortController();
    let slowAnswers = 0;
    const { outcome, events } = await design(
      async (body) => {
        if (promptKind(body) !== 'fields') return base(body);
        // The first node's fields are asked for: the user presses Ctrl+C while they are written.
        interrupt.abort();
        await new Promise((resolve) => setTimeout(resolve, 300));
        slowAnswers++;
        return base(body);
      },
      { signal: interrupt.signal },
    );
    expect(outcome).toMatchObject({ ok: false, stage: 'fields', reason: 'interrupted', interrupted: true });
    if (outcome.ok) return;
    expect(outcome.kept.map((p) => p.slice(dir.length + 1))).toContain('tutor.partial.dot');
    expect(events.at(-1)).toMatchObject({ type: 'design.stage', stage: 'fields', status: 'fail' });
    expect(existsSync(join(dir, 'tutor.autogram.json'))).toBe(false);
    // The answers still arrive after the sandbox is gone; nothing may throw when they do.
    await vi.waitFor(() => expect(slowAnswers).toBeGreaterThan(0), { timeout: 5000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(existsSync(join(dir, 'tutor.autogram.json'))).toBe(false);
  });

  it('re-asks a node whose fields answer is malformed, with the validation error', async () => {
    const base = cooperativeDesigner(5);
    let spoiled = 0;
    const { outcome } = await design((body) => {
      if (promptKind(body) === 'fields' && asksFor(body, 'start') && spoiled++ === 0)
        return '{"action": "chat", "instruction": "Greet.", "userInstructions": ["only one"]}';
      return base(body);
    });
    expect(outcome.ok).toBe(true);
    const startCalls = server!
      .chatRequests()
      .filter(
        (b) => promptKind(b) !== 'outline' && b.messages.some((m) => m.content.includes('node "start"')),
      );
    expect(startCalls).toHaveLength(2);
    expect(lastMessage(startCalls[1]!)).toMatch(/transitionQuestion|userInstructions/);
    // Five nodes, one of them asked twice.
    expect(outcome.figures.calls).toBe(2 + 5 + 1);
  });

  it('fails at the fields stage when a node never gets a usable answer, keeping that answer', async () => {
    const base = cooperativeDesigner(5);
    const { outcome } = await design((body) =>
      promptKind(body) === 'fields' && asksFor(body, 'step_2')
        ? 'I think this node should greet.'
        : base(body),
    );
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.stage).toBe('fields');
    expect(outcome.reason).toMatch(/^node step_2: .*no usable answer after 3 tries/);
    expect(await readFile(join(dir, 'tutor.partial.last-answer.txt'), 'utf8')).toContain(
      'I think this node should greet.',
    );
  });

  it('asks for several nodes to a call when there are more nodes than calls in flight, in one wave', async () => {
    const waves = inWaves(3, cooperativeDesigner(9));
    const { outcome } = await design(waves.reply, { limits: { concurrency: 3 } });
    expect(outcome.ok).toBe(true);
    expect(waves.stalls()).toBe(0);
    expect(server!.maxInFlight).toBe(3);
    expect(askedNodes()).toEqual([
      ['start', 'step_1', 'step_2'],
      ['step_3', 'step_4', 'step_5'],
      ['step_6', 'step_7', 'goodbye'],
    ]);
    // outline, draft, then the nine nodes in one wave of three calls.
    expect(outcome.figures).toMatchObject({ calls: 5, roundTrips: 3 });
  });

  it('asks alone for a node a batch answer missed and for one it got wrong, keeping the rest', async () => {
    const base = cooperativeDesigner(6);
    const { outcome } = await design(
      (body) => {
        if (promptKind(body) !== 'fields' || !isBatch(body)) return base(body);
        const answer = JSON.parse(fieldsAnswer(body)) as Record<string, Record<string, unknown>>;
        delete answer.step_1;
        if (answer.step_4) answer.step_4.userInstructions = [];
        return JSON.stringify(answer);
      },
      { limits: { concurrency: 2 } },
    );
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(askedNodes()).toEqual([
      ['start', 'step_1', 'step_2'],
      ['step_1'],
      ['step_3', 'step_4', 'goodbye'],
      ['step_4'],
    ]);
    expect(outcome.graph.nodes.find((n) => n.name === 'step_4')!.userInstructions).toEqual([
      'Reply in way 1 at step_4',
    ]);
    // One wave of batches, then one of the nodes asked alone.
    expect(outcome.figures).toMatchObject({ calls: 6, roundTrips: 4 });
  });

  it('asks alone for every node of a batch whose answer is not JSON', async () => {
    const base = cooperativeDesigner(4);
    const { outcome } = await design(
      (body) =>
        promptKind(body) === 'fields' && isBatch(body) && asksFor(body, 'start')
          ? 'Here are the fields you asked for: start is a greeting.'
          : base(body),
      { limits: { concurrency: 2 } },
    );
    expect(outcome.ok).toBe(true);
    expect(askedNodes()).toEqual([['start'], ['start', 'step_1'], ['step_1'], ['step_2', 'goodbye']]);
    expect(outcome.figures).toMatchObject({ calls: 6, roundTrips: 4 });
  });

  it('checks the design in simulated conversations and repairs the node the classifier gets wrong', async () => {
    // The classifier always answers A, so a user who takes the second way out of start is misread.
    const { outcome } = await design(cooperativeDesigner(5), { check: 3 });
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.check).toMatchObject({ conversations: 3, repaired: ['start'], unrepaired: [] });
    expect(outcome.check!.agreed).toBeLessThan(outcome.check!.decisions);
    expect(outcome.check!.edgesCovered).toBeGreaterThan(0);
    const repair = server!.chatRequests().filter((b) => promptKind(b) === 'repair');
    expect(repair.length).toBeGreaterThan(0);
    expect(lastMessage(repair[0]!)).toMatch(/the classifier chose "reply way 1 at start"/);
    const { file } = await loadGraphFile(outcome.saved.graph);
    expect(hasErrors(lintGraph(file))).toBe(false);
  });
});
