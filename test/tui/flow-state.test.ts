import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events.js';
import { FLOW_RUN_FORMAT, type FlowRunState } from '../../src/flow/run-state.js';
import { nodeRows, statusText } from '../../src/tui/flow/node-lines.js';
import {
  initialFlowView,
  LIVE_CHARS,
  reduceFlowView,
  type FlowNodeView,
  type FlowView,
} from '../../src/tui/flow/view-state.js';

const STARTED: AgentEvent = {
  type: 'flow.started',
  flow: 'brief',
  pass: 1,
  nodes: ['outline', 'facts', 'draft'],
  concurrency: 2,
  resumed: false,
};

function fold(
  events: AgentEvent[],
  view: FlowView = initialFlowView({ flow: 'brief', attempts: 3 }),
): FlowView {
  return events.reduce(reduceFlowView, view);
}

function node(view: FlowView, key: string): FlowNodeView {
  const found = view.nodes.find((n) => n.key === key);
  if (!found) throw new Error(`no node ${key} in ${view.nodes.map((n) => n.key).join(', ')}`);
  return found;
}

const delta = (name: string, text: string): AgentEvent => ({ type: 'flow.delta', node: name, delta: text });

describe('reduceFlowView', () => {
  it('knows the flow by the name it was given until the pass starts, then lists its nodes pending', () => {
    const before = initialFlowView({ flow: 'brief', attempts: 3 });
    expect(before).toMatchObject({ flow: 'brief', started: false, nodes: [], attempts: 3, tokens: 0 });
    const view = fold([STARTED]);
    expect(view).toMatchObject({ flow: 'brief', started: true, pass: 1, concurrency: 2, resumed: false });
    expect(view.nodes.map((n) => [n.name, n.status, n.temporary])).toEqual([
      ['outline', 'pending', false],
      ['facts', 'pending', false],
      ['draft', 'pending', false],
    ]);
  });

  it('notes a prompt trimmed to the context and references read as None on the node’s line', () => {
    const view = fold([
      STARTED,
      { type: 'flow.unset', node: 'draft', references: ['$db.plan$', '$db.x\u001b[2J$'] },
      { type: 'flow.trimmed', node: 'draft', dropped: 2, cut: 1, from: 6120, to: 3050, contextTokens: 4096 },
      { type: 'flow.node', node: 'draft', status: 'done', output: 'x', tokens: 100, attempt: 1 },
    ]);
    expect(statusText(node(view, 'draft'))).toBe(
      'done · 100 tokens · read as None: $db.plan$, $db.x$ · prompt trimmed to the 4096-token context (6120 → 3050 tokens)',
    );
  });

  it('shows the progress a running tool node’s server reports, as text made safe', () => {
    const view = fold([
      STARTED,
      { type: 'flow.node', node: 'facts', status: 'running', attempt: 1 },
      { type: 'flow.progress', node: 'facts', progress: 1, total: 3, message: 'page 1' },
      { type: 'flow.progress', node: 'facts', progress: 2, total: 3, message: 'page 2\u001b[2J' },
      { type: 'flow.progress', node: 'outline', progress: 5 },
    ]);
    expect(node(view, 'facts').live).toBe('2/3 page 2');
    expect(node(view, 'outline').live).toBe('');
  });

  it('gathers a running node’s answer as it streams, and drops it on a retry and when done', () => {
    const running = fold([
      STARTED,
      { type: 'flow.step', step: 1, nodes: ['outline', 'facts'] },
      { type: 'flow.node', node: 'outline', status: 'running', attempt: 1 },
      delta('outline', 'Title: '),
      delta('outline', 'Flows'),
    ]);
    expect(running.step).toBe(1);
    expect(node(running, 'outline')).toMatchObject({ status: 'running', attempt: 1, live: 'Title: Flows' });
    const retried = fold(
      [
        { type: 'flow.node', node: 'outline', status: 'retry', attempt: 2, detail: 'no JSON object' },
        delta('outline', '{"title"'),
      ],
      running,
    );
    expect(node(retried, 'outline')).toMatchObject({
      status: 'retry',
      attempt: 2,
      detail: 'no JSON object',
      live: '{"title"',
    });
    const done = reduceFlowView(retried, {
      type: 'flow.node',
      node: 'outline',
      status: 'done',
      attempt: 2,
      tokens: 120,
      output: { title: 'Flows' },
    });
    expect(node(done, 'outline')).toMatchObject({ status: 'done', attempt: 2, tokens: 120, live: '' });
    expect(node(done, 'outline').detail).toBeUndefined();
  });

  it('keeps only the tail of a long answer', () => {
    const view = fold([
      STARTED,
      { type: 'flow.node', node: 'facts', status: 'running', attempt: 1 },
      ...Array.from({ length: 100 }, (_, i) => delta('facts', `fact ${i}: ${'x'.repeat(90)}\n`)),
    ]);
    const { live, streamed } = node(view, 'facts');
    expect(live.length).toBeLessThanOrEqual(LIVE_CHARS);
    expect(live.endsWith(`fact 99: ${'x'.repeat(90)}\n`)).toBe(true);
    expect(streamed.length).toBeLessThanOrEqual(3000);
  });

  it('strips escape sequences from streamed text, even one split across two deltas', () => {
    const view = fold([
      STARTED,
      { type: 'flow.node', node: 'facts', status: 'running', attempt: 1 },
      delta('facts', 'a \u001b[31mred\u001b[0m word \u001b]0;ti'),
      delta('facts', 'tle\u0007 and\u001b[2J a bell\u0007 \u009b'),
    ]);
    const { live } = node(view, 'facts');
    expect(live).toBe('a red word  and a bell\\u0007 \\u009b');
    // eslint-disable-next-line no-control-regex -- control characters are what this looks for
    expect(live).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  });

  it('ignores text for a node that is not asked now, and events it does not show', () => {
    const view = fold([STARTED]);
    expect(reduceFlowView(view, delta('draft', 'late'))).toBe(view);
    expect(reduceFlowView(view, delta('nobody', 'x'))).toBe(view);
    expect(reduceFlowView(view, { type: 'user', text: 'hi' })).toBe(view);
    // Usage before the pass starts is not the pass's.
    const before = initialFlowView();
    const call: AgentEvent = {
      type: 'model.call',
      role: 'chatbot',
      model: 'm',
      purpose: 'flow',
      usage: { promptTokens: 1, completionTokens: 1 },
      ms: 1,
      scripted: true,
    };
    expect(reduceFlowView(before, call)).toBe(before);
  });

  it('records failures, blocked nodes with their upstream, reused nodes with what they saved, and writes', () => {
    const view = fold([
      STARTED,
      { type: 'flow.node', node: 'facts', status: 'running', attempt: 1 },
      {
        type: 'flow.node',
        node: 'facts',
        status: 'failed',
        detail: 'the model could not be reached',
        tokens: 30,
      },
      { type: 'flow.node', node: 'draft', status: 'blocked', detail: 'skipped: upstream failed (facts)' },
      { type: 'flow.node', node: 'outline', status: 'reused', output: 'x', tokens: 340 },
      { type: 'flow.database', by: 'outline', keys: ['topic', 'score'] },
      { type: 'flow.database', by: 'outline', keys: ['topic'] },
    ]);
    expect(node(view, 'facts')).toMatchObject({
      status: 'failed',
      detail: 'the model could not be reached',
      tokens: 30,
      live: '',
    });
    expect(node(view, 'draft')).toMatchObject({
      status: 'blocked',
      detail: 'skipped: upstream failed (facts)',
    });
    expect(node(view, 'outline')).toMatchObject({ status: 'reused', tokens: 340, wrote: ['score', 'topic'] });
    expect(statusText(node(view, 'outline'))).toBe('reused (saved 340 tokens) · wrote score, topic');
    expect(statusText(node(view, 'draft'))).toBe('skipped: upstream failed (facts)');
    expect(statusText(node(view, 'facts'))).toBe('failed: the model could not be reached · 30 tokens');
  });

  it('adds a node a change added, marked temporary, and lists every change', () => {
    const view = fold([
      STARTED,
      { type: 'flow.changed', by: 'outline', change: 'add node extra', applied: true },
      {
        type: 'flow.changed',
        by: 'outline',
        change: 'add edge draft → outline',
        applied: false,
        reason: 'it would close a cycle',
      },
      { type: 'flow.changed', by: 'facts', change: 'add node ghost', applied: false, reason: 'refused' },
      { type: 'flow.node', node: 'extra', status: 'running', attempt: 1 },
    ]);
    expect(view.nodes.map((n) => [n.key, n.temporary])).toEqual([
      ['outline', false],
      ['facts', false],
      ['draft', false],
      ['extra', true],
    ]);
    expect(node(view, 'extra').status).toBe('running');
    expect(view.changes).toEqual([
      { by: 'outline', change: 'add node extra', applied: true },
      {
        by: 'outline',
        change: 'add edge draft → outline',
        applied: false,
        reason: 'it would close a cycle',
      },
      { by: 'facts', change: 'add node ghost', applied: false, reason: 'refused' },
    ]);
  });

  it('counts the pass’s tokens from its model calls, then takes the end’s figures as a report', () => {
    const call = (prompt: number, completion: number): AgentEvent => ({
      type: 'model.call',
      role: 'chatbot',
      model: 'm',
      purpose: 'flow node',
      usage: { promptTokens: prompt, completionTokens: completion },
      ms: 5,
      scripted: true,
    });
    const running = fold([STARTED, call(10, 5), call(20, 7)]);
    expect(running.tokens).toBe(42);
    const ended = fold(
      [
        { type: 'flow.changed', by: 'outline', change: 'skip draft', applied: true },
        {
          type: 'flow.ended',
          pass: 1,
          done: 2,
          failed: 0,
          reused: 1,
          blocked: 0,
          tokens: 50,
          savedTokens: 340,
          ms: 4200,
        },
        call(1, 1),
      ],
      running,
    );
    expect(ended.tokens).toBe(50);
    expect(ended.ended).toEqual({
      pass: 1,
      done: 2,
      failed: 0,
      reused: 1,
      blocked: 0,
      tokens: 50,
      savedTokens: 340,
      ms: 4200,
    });
    expect(ended.reports).toHaveLength(1);
    expect(ended.reports[0]).toMatchObject({
      id: 0,
      flow: 'brief',
      pass: 1,
      concurrency: 2,
      resumed: false,
      changes: [{ by: 'outline', change: 'skip draft', applied: true }],
      end: ended.ended,
    });
    expect(ended.reports[0]!.nodes.map((n) => n.key)).toEqual(['outline', 'facts', 'draft']);
  });

  it('starts the next pass afresh, keeping the reports of those before it', () => {
    const first = fold([
      STARTED,
      { type: 'flow.node', node: 'outline', status: 'done', tokens: 5 },
      { type: 'flow.changed', by: 'outline', change: 'add node extra', applied: true },
      {
        type: 'flow.ended',
        pass: 1,
        done: 1,
        failed: 0,
        reused: 0,
        blocked: 0,
        tokens: 5,
        savedTokens: 0,
        ms: 10,
      },
    ]);
    const second = reduceFlowView(first, { ...STARTED, pass: 2 } as AgentEvent);
    expect(second).toMatchObject({ pass: 2, tokens: 0, changes: [], attempts: 3 });
    expect(second.ended).toBeUndefined();
    expect(second.step).toBeUndefined();
    expect(second.nodes.map((n) => n.status)).toEqual(['pending', 'pending', 'pending']);
    expect(second.reports).toBe(first.reports);
  });

  it('shows what a resumed pass’s earlier steps settled, from its saved state', () => {
    const state: FlowRunState = {
      format: FLOW_RUN_FORMAT,
      flow: 'brief',
      flowHash: 'abc',
      passes: 0,
      database: {},
      last: {},
      current: {
        pass: 1,
        inputs: {},
        steps: 1,
        results: {
          outline: { status: 'done', output: 'o', prompt: 'p', tokens: 100, attempts: 2 },
          facts: { status: 'failed', tokens: 30, attempts: 3, detail: 'no answer' },
        },
        changes: [
          { op: 'add-node', node: { name: 'extra', prompt: 'more', dependencies: ['outline'], after: [] } },
        ],
        startedAt: '2025-01-01T00:00:00.000Z',
      },
    };
    const seeded = initialFlowView({ state });
    expect(seeded).toMatchObject({ flow: 'brief', pass: 1, resumed: true, tokens: 130, step: 1 });
    const view = fold(
      [
        { ...STARTED, nodes: ['outline', 'facts', 'draft', 'extra'], resumed: true } as AgentEvent,
        { type: 'flow.node', node: 'draft', status: 'blocked', detail: 'skipped: upstream failed (facts)' },
      ],
      seeded,
    );
    expect(view.nodes.map((n) => [n.key, n.status, n.earlier, n.temporary])).toEqual([
      ['outline', 'done', true, false],
      ['facts', 'failed', true, false],
      ['draft', 'blocked', false, false],
      ['extra', 'pending', false, true],
    ]);
    expect(statusText(node(view, 'outline'))).toBe('done · 100 tokens · 2 answers · before the resume');
    // Without its state, a node no event tells of is settled before the resume once the pass ends.
    const blind = fold([
      { ...STARTED, resumed: true } as AgentEvent,
      { type: 'flow.node', node: 'draft', status: 'done', tokens: 1 },
      {
        type: 'flow.ended',
        pass: 1,
        done: 3,
        failed: 0,
        reused: 0,
        blocked: 0,
        tokens: 9,
        savedTokens: 0,
        ms: 1,
      },
    ]);
    expect(statusText(node(blind, 'outline'))).toBe('settled before the resume');
  });

  it('makes names, details and changes safe as they enter', () => {
    const view = fold([
      { ...STARTED, flow: 'br\u001b[2Jief', nodes: ['a\u001b]0;x\u0007b'] } as AgentEvent,
      { type: 'flow.node', node: 'a\u001b]0;x\u0007b', status: 'failed', detail: 'bad \u001b[31mthing\r' },
      { type: 'flow.changed', by: 'a', change: 'add node \u001b[1mz', applied: true },
    ]);
    expect(view.flow).toBe('brief');
    expect(view.nodes[0]).toMatchObject({ name: 'ab', status: 'failed', detail: 'bad thing\\u000d' });
    expect(view.changes[0]!.change).toBe('add node z');
    expect(view.nodes[1]).toMatchObject({ name: 'z', temporary: true });
    // A name is drawn on one line.
    const split = reduceFlowView(view, { type: 'flow.node', node: 'two\nlines', status: 'running' });
    expect(split.nodes.at(-1)).toMatchObject({ key: 'two\nlines', name: 'two ⏎ lines' });
  });
});

describe('nodeRows', () => {
  const nodes = (statuses: FlowNodeView['status'][]): FlowNodeView[] =>
    statuses.map((status, i) => ({
      key: `n${i}`,
      name: `n${i}`,
      status,
      temporary: false,
      earlier: false,
      wrote: [],
      notes: [],
      live: status === 'running' ? 'line one\nline two\nline three' : '',
      streamed: '',
    }));

  it('shows every node and the last two lines of a running answer when they fit', () => {
    const rows = nodeRows(nodes(['done', 'running', 'pending']), 80, 10);
    expect(rows.map((r) => (r.kind === 'node' ? [r.node.key, r.live] : r.kind))).toEqual([
      ['n0', []],
      ['n1', ['line two', 'line three']],
      ['n2', []],
    ]);
  });

  it('folds runs of quiet nodes, then cuts the list with a count, never taller than it may be', () => {
    const many = nodes([...Array(8).fill('done'), 'running', 'failed', ...Array(10).fill('pending')]);
    const folded = nodeRows(many, 80, 6);
    expect(folded.map((r) => (r.kind === 'fold' ? `${r.status}×${r.names.length}` : r.kind))).toEqual([
      'done×8',
      'node',
      'node',
      'pending×10',
    ]);
    for (const height of [1, 2, 3, 4, 5])
      expect(
        nodeRows(many, 80, height).reduce((n, r) => n + (r.kind === 'node' ? 1 + r.live.length : 1), 0),
      ).toBeLessThanOrEqual(Math.max(height, 2));
    const cut = nodeRows(many, 80, 3);
    expect(cut.at(-1)).toEqual({ kind: 'more', count: 12 });
  });
});
