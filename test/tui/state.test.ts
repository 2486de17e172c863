import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events.js';
import { graphFileSchema } from '../../src/graph/schema.js';
import { StaticGraph } from '../../src/graph/view.js';
import { layoutGraph } from '../../src/tui/graph-layout.js';
import { initialRunState, reduceRunState, type RunState } from '../../src/tui/run-state.js';
import { offsetWindow, scrollWindow } from '../../src/tui/scroll.js';

function run(events: AgentEvent[], names = ['a', 'b', 'c']): RunState {
  return events.reduce(
    (state, event) =>
      reduceRunState(state, {
        type: 'event',
        event,
        at: 0,
        names: event.type === 'graph.edited' ? names : undefined,
      }),
    initialRunState({ name: 'g', version: 0, names: ['a', 'b'] }, 0),
  );
}

describe('scroll windows', () => {
  it('never take more lines than they are given and keep the focus in view', () => {
    for (const total of [1, 5, 10, 11, 50, 301])
      for (const height of [3, 4, 10, 20])
        for (let focus = 0; focus < total; focus += 3) {
          const w = scrollWindow(total, focus, height);
          const lines = w.end - w.start + (w.above > 0 ? 1 : 0) + (w.below > 0 ? 1 : 0);
          expect(lines).toBeLessThanOrEqual(height);
          expect(focus).toBeGreaterThanOrEqual(w.start);
          expect(focus).toBeLessThan(w.end);
          expect(w.above + (w.end - w.start) + w.below).toBe(total);
        }
  });

  it('count every hidden line when scrolled by offset', () => {
    for (const offset of [0, 1, 7, 40, 99]) {
      const w = offsetWindow(100, offset, 10);
      expect(w.end - w.start + (w.above > 0 ? 1 : 0) + (w.below > 0 ? 1 : 0)).toBeLessThanOrEqual(10);
      expect(w.above + (w.end - w.start) + w.below).toBe(100);
    }
  });
});

describe('run state', () => {
  it('tells nodes added by a turn of edits from nodes it changed, and finds removed ones', () => {
    const edited = run([
      { type: 'graph.edited', version: 1, by: 'self', op: 'add', nodes: ['c', 'a'], totalNodes: 3 },
    ]);
    expect(edited.lastEdit).toMatchObject({ added: ['c'], changed: ['a'], removed: [] });
    const removed = reduceRunState(edited, {
      type: 'event',
      event: { type: 'graph.edited', version: 2, by: 'tidy', op: 'remove', nodes: ['b'], totalNodes: 2 },
      at: 0,
      names: ['a', 'c'],
    });
    expect(removed.lastEdit).toMatchObject({
      from: 1,
      version: 2,
      by: ['self', 'tidy'],
      added: ['c'],
      changed: ['a'],
      removed: ['b'],
    });
    expect(removed.nodeCount).toBe(2);
  });

  it('starts a new set of edit marks once the user speaks', () => {
    const state = run(
      [
        { type: 'graph.edited', version: 1, by: 'self', op: 'add', nodes: ['c'], totalNodes: 3 },
        { type: 'user', text: 'next' },
        { type: 'graph.edited', version: 2, by: 'self', op: 'update', nodes: ['c'], totalNodes: 3 },
      ],
      ['a', 'b', 'c'],
    );
    expect(state.lastEdit).toMatchObject({ from: 2, version: 2, added: [], changed: ['c'] });
  });

  it('folds a thought and transitions under the reply they led to, streaming only the chatbot', () => {
    let state = run([
      { type: 'user', text: 'hi' },
      { type: 'node.entered', node: 'a', action: 'thought', depth: 0 },
      { type: 'model.delta', role: 'chatbot', purpose: 'node a', delta: 'think' },
      { type: 'transition', from: 'a', to: 'b', kind: 'single' },
      { type: 'node.entered', node: 'b', action: 'chat', depth: 0 },
      { type: 'model.delta', role: 'chatbot', purpose: 'node b', delta: 'Hel' },
      { type: 'model.delta', role: 'userbot', purpose: 'simulated user', delta: 'not the agent' },
    ]);
    expect(state.turn.streamed).toBe('Hel');
    state = reduceRunState(state, {
      type: 'event',
      event: { type: 'reply', node: 'b', text: 'Hello' },
      at: 0,
    });
    expect(state.transcript.map((e) => e.kind)).toEqual(['user', 'agent']);
    const reply = state.transcript[1]!;
    expect(reply.kind === 'agent' && reply.decisions.map((d) => d.kind)).toEqual(['thought', 'transition']);
    expect(state.turn).toEqual({ decisions: [], streamed: '' });
    expect(state.working).toBe(false);
  });

  it('keeps a stage retrying until it reports done, with each reason', () => {
    const state = run([
      { type: 'design.stage', stage: 'dot', status: 'start' },
      { type: 'design.stage', stage: 'dot', status: 'retry', detail: 'one' },
      { type: 'design.stage', stage: 'dot', status: 'start' },
      { type: 'design.stage', stage: 'dot', status: 'progress', detail: 'half' },
    ]);
    expect(state.stages).toEqual([
      { name: 'dot', status: 'retry', retries: 1, reasons: ['one'], detail: 'half', text: '' },
    ]);
  });
});

describe('graph layout', () => {
  const graph = new StaticGraph(
    graphFileSchema.parse({
      name: 'g',
      nodes: [
        { name: 'start1', action: 'chat', transitions: ['route.*'] },
        { name: 'route.a', action: 'transition', booleanCondition: 'x > 1', transitions: ['ask.n'] },
        { name: 'route.b', action: 'transition', transitions: ['missing'] },
        { name: 'ask.1', action: 'chat', transitions: ['quit'] },
        { name: 'ask.2', action: 'chat', transitions: ['$next'] },
        { name: 'orphan', action: 'chat', transitions: ['island'] },
        { name: 'island', action: 'chat', transitions: ['return'] },
      ],
    }),
  );

  it('follows wildcard and visit groups, and nests unreachable nodes under their own section', () => {
    const { rows, order } = layoutGraph(graph);
    expect(order).toEqual(['start1', 'route.a', 'route.b', 'ask.1', 'ask.2', 'orphan', 'island']);
    expect(rows.map((r) => (r.kind === 'node' ? `${r.depth}:${r.name}` : r.label))).toEqual([
      '0:start1',
      '1:route.a',
      '1:route.b',
      '2:ask.1',
      '2:ask.2',
      'not reachable from start1 except through $next',
      '0:orphan',
      '1:island',
    ]);
    const routeB = rows.find((r) => r.kind === 'node' && r.name === 'route.b');
    expect(routeB?.kind === 'node' && routeB.edges).toEqual([{ label: 'missing', missing: true }]);
  });

  it('calls the rest plainly unreachable when no $var transition could jump there', () => {
    const plain = new StaticGraph(
      graphFileSchema.parse({
        name: 'g',
        nodes: [
          { name: 'start1', action: 'chat', transitions: ['quit'] },
          { name: 'orphan', action: 'chat', transitions: ['start1'] },
        ],
      }),
    );
    expect(layoutGraph(plain).rows).toContainEqual({ kind: 'section', label: 'not reachable from start1' });
  });
});
