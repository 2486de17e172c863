import { describe, expect, it } from 'vitest';
import { findCycle } from '../../src/flow/dag.js';
import { baseStructure } from '../../src/flow/changes.js';
import { flowRunStateSchema, newFlowRunState, type FlowRunState } from '../../src/flow/run-state.js';
import { runFlowPass, type FlowRunOptions } from '../../src/flow/runner.js';
import type { FlowFile } from '../../src/flow/schema.js';
import { flowModel, flowOf, recordedBus, type Answerer } from '../support/flow.js';
import { recordingStore } from '../support/recording-store.js';

/** Runs one pass of `flow` over `state` (a new run by default). */
async function pass(
  flow: FlowFile,
  options: {
    answer?: Answerer;
    state?: FlowRunState;
    concurrency?: number;
    inputs?: Record<string, string>;
    delayMs?: number;
    signal?: AbortSignal;
  } = {},
) {
  const { model, calls } = flowModel(options.answer, options.delayMs);
  const { bus, events } = recordedBus();
  const state = options.state ?? newFlowRunState(flow);
  const saves: string[] = [];
  const run: FlowRunOptions = {
    flow,
    state,
    model,
    events: bus,
    ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
    ...(options.signal && { signal: options.signal }),
    keptAt: { store: recordingStore(saves), key: 'test-run' },
  };
  const report = await runFlowPass(run, options.inputs);
  return { report, calls, events, state, saves };
}

const diamond = flowOf(
  [
    { name: 'facts', prompt: 'List the facts about $db.task$.' },
    { name: 'risks', prompt: 'List the risks.' },
    { name: 'plan', prompt: 'Write the plan.', dependencies: ['risks', 'facts'] },
  ],
  { inputs: { task: {} }, config: { system: 'You plan tasks.' } },
);

describe('a flow pass', () => {
  it('composes the system message, each dependency as an earlier turn in the order listed, then the prompt', async () => {
    const { report, calls } = await pass(diamond, { inputs: { task: 'a move' } });
    expect(report.complete).toBe(true);
    const plan = calls.find((c) => c.node === 'plan')!;
    expect(plan.messages).toEqual([
      { role: 'system', content: 'You plan tasks.' },
      { role: 'user', content: 'List the risks.' },
      { role: 'assistant', content: 'answer of risks' },
      { role: 'user', content: 'List the facts about a move.' },
      { role: 'assistant', content: 'answer of facts' },
      { role: 'user', content: 'Write the plan.' },
    ]);
    expect(report.outputs).toEqual({
      facts: 'answer of facts',
      risks: 'answer of risks',
      plan: 'answer of plan',
    });
    expect(report.sinks).toEqual(['plan']);
  });

  it('puts everything in one message where a compose template says how', async () => {
    const flow = flowOf(
      [
        { name: 'a', prompt: 'First?' },
        {
          name: 'b',
          prompt: 'Second?',
          dependencies: ['a'],
          compose: 'Given: $out.a$\nDB: $db.k$\n$prompt$',
        },
      ],
      { database: { k: { x: 1 } } },
    );
    const { calls } = await pass(flow);
    expect(calls.find((c) => c.node === 'b')!.messages).toEqual([
      { role: 'user', content: 'Given: answer of a\nDB: {"x":1}\nSecond?' },
    ]);
  });

  it('refuses a pass without a required input, naming it', async () => {
    await expect(pass(diamond)).rejects.toThrow('needs --input task=');
    await expect(pass(diamond, { inputs: { task: 'x', mood: 'y' } })).rejects.toThrow(
      'takes no input "mood"',
    );
  });

  it('runs the ready nodes of a step together, and gives the same results in the same order one at a time', async () => {
    const wide = flowOf([
      ...['a', 'b', 'c', 'd'].map((name) => ({
        name,
        prompt: `${name}?`,
        afterQuery: { code: `db.seen = [...(db.seen ?? []), node]; answer.toUpperCase()` },
      })),
      { name: 'e', prompt: 'e? $db.seen$', dependencies: ['a', 'b'] },
      { name: 'f', prompt: 'f?', dependencies: ['e', 'c', 'd'] },
    ]);
    const concurrent = await pass(wide, {
      concurrency: 4,
      delayMs: 30,
      answer: (node) => `answer of ${node}`,
    });
    const sequential = await pass(wide, {
      concurrency: 1,
      delayMs: 5,
      answer: (node) => `answer of ${node}`,
    });
    expect(concurrent.report.outputs).toEqual(sequential.report.outputs);
    expect(Object.keys(concurrent.report.results)).toEqual(Object.keys(sequential.report.results));
    expect(concurrent.state.database).toEqual(sequential.state.database);
    const steps = (events: typeof concurrent.events) =>
      events.flatMap((e) => (e.type === 'flow.step' ? [e.nodes] : []));
    expect(steps(concurrent.events)).toEqual([['a', 'b', 'c', 'd'], ['e'], ['f']]);
    expect(steps(sequential.events)).toEqual(steps(concurrent.events));
    // Four 30 ms answers at once, then two: about three round trips, not six.
    expect(concurrent.report.outputs.e).toBe('answer of e');
  });

  it('sends a rejected answer back with the reason, and keeps the first answer the step accepts', async () => {
    const flow = flowOf([
      {
        name: 'count',
        prompt: 'How many?',
        afterQuery: {
          code: 'const n = Number(answer); if (!Number.isInteger(n)) throw new Error("reply with a whole number only"); n',
        },
      },
    ]);
    const { report, calls, events } = await pass(flow, {
      answer: (_node, _m, asked) => (asked === 0 ? 'about five' : '5'),
    });
    expect(report.outputs.count).toBe(5);
    expect(report.results.count).toMatchObject({ status: 'done', attempts: 2 });
    expect(calls[1]!.messages.slice(-2)).toEqual([
      { role: 'assistant', content: 'about five' },
      { role: 'user', content: expect.stringContaining('reply with a whole number only') },
    ]);
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'flow.node',
        node: 'count',
        status: 'retry',
        detail: 'reply with a whole number only',
      }),
    );
  });

  it('uses the fallback when every attempt is rejected, and says so', async () => {
    const flow = flowOf(
      [
        {
          name: 'n',
          prompt: 'Number?',
          afterQuery: { schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } },
          fallback: { n: 0 },
        },
      ],
      { config: { attempts: 2 } },
    );
    const { report, calls } = await pass(flow, { answer: () => 'no idea' });
    expect(calls).toHaveLength(2);
    expect(report.results.n).toMatchObject({ status: 'done', output: { n: 0 }, fellBack: true });
    expect(report.results.n!.detail).toMatch(
      /fallback used: 2 answers were rejected, the last because the answer is not valid JSON/,
    );
  });

  it('parses answers against the schema', async () => {
    const flow = flowOf([
      {
        name: 'n',
        prompt: 'Number?',
        afterQuery: { schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } },
      },
    ]);
    const { report, calls } = await pass(flow, { answer: () => '```json\n{"n": 4}\n```' });
    expect(report.outputs.n).toEqual({ n: 4 });
    expect(calls[0]!.request.responseFormat).toMatchObject({ type: 'json_schema' });
  });

  it('reports the nodes after a failed one as skipped because upstream failed, and runs the rest', async () => {
    const flow = flowOf([
      { name: 'bad', prompt: 'x', afterQuery: { code: 'throw new Error("never good")' } },
      { name: 'after', prompt: 'y', dependencies: ['bad'] },
      { name: 'later', prompt: 'z', dependencies: ['after'] },
      { name: 'fine', prompt: 'w' },
    ]);
    const { report, events } = await pass(flow);
    expect(report.complete).toBe(false);
    expect(report.results.bad).toMatchObject({ status: 'failed', attempts: 3 });
    expect(report.results.after).toMatchObject({
      status: 'blocked',
      detail: 'skipped: upstream failed (bad)',
    });
    expect(report.results.later).toMatchObject({
      status: 'blocked',
      detail: 'skipped: upstream failed (bad)',
    });
    expect(report.results.fine).toMatchObject({ status: 'done' });
    expect(events.filter((e) => e.type === 'flow.node' && e.status === 'blocked')).toHaveLength(2);
  });

  it('adds temporary nodes and edges for the pass only, and reverts them after it', async () => {
    const flow = flowOf([
      {
        name: 'gate',
        prompt: 'Risky?',
        afterQuery: {
          code: 'if (answer === "yes") { flow.addNode({ name: "avoid", prompt: "Adjust the route." }); flow.addEdge("avoid", "act"); } answer',
        },
      },
      { name: 'act', prompt: 'Act.', dependencies: ['gate'] },
    ]);
    const first = await pass(flow, { answer: (node) => (node === 'gate' ? 'yes' : `answer of ${node}`) });
    expect(first.report.order).toEqual(['gate', 'act', 'avoid']);
    expect(first.calls.map((c) => c.node)).toEqual(['gate', 'avoid', 'act']);
    expect(first.calls.at(-1)!.messages.map((m) => m.content)).toContain('Adjust the route.');
    expect(first.events).toContainEqual(
      expect.objectContaining({ type: 'flow.changed', by: 'gate', change: 'add node avoid', applied: true }),
    );
    const second = await pass(flow, {
      state: first.state,
      answer: (node) => (node === 'gate' ? 'no' : `answer of ${node}`),
    });
    expect(second.report.order).toEqual(['gate', 'act']);
    expect(second.calls.map((c) => c.node)).toEqual(['gate', 'act']);
  });

  it('refuses changes to a node that ran in an earlier step, telling the code which step', async () => {
    const flow = flowOf([
      { name: 'first', prompt: 'a' },
      {
        name: 'second',
        prompt: 'b',
        dependencies: ['first'],
        afterQuery: {
          code: 'try { flow.addEdge("second", "first"); } catch (e) { db.refused = e.message; } answer',
        },
      },
    ]);
    const { state, events } = await pass(flow);
    expect(state.database.refused).toBe(
      'flow: add edge second → first refused: "first" already ran in step 1 of this pass; its inputs cannot change',
    );
    expect(events).toContainEqual(expect.objectContaining({ type: 'flow.changed', applied: false }));
  });

  it('lets a node add an edge into a node of its own step that comes later, which then waits for it', async () => {
    const flow = flowOf([
      { name: 'scout', prompt: 'Look around.', afterQuery: { code: 'flow.addEdge("scout", "act"); answer' } },
      { name: 'act', prompt: 'Act.' },
    ]);
    for (const concurrency of [1, 2]) {
      const { report, calls, events } = await pass(flow, { concurrency });
      expect(report.complete).toBe(true);
      expect(report.changes).toEqual([{ by: 'scout', change: 'add edge scout → act', applied: true }]);
      expect(report.results.scout!.attempts).toBe(1);
      const act = calls.filter((c) => c.node === 'act').at(-1)!;
      expect(act.messages.map((m) => m.content)).toEqual(['Look around.', 'answer of scout', 'Act.']);
      expect(
        events.filter((e) => e.type === 'flow.step').map((e) => e.type === 'flow.step' && e.nodes),
      ).toEqual([['scout', 'act'], ['act']]);
      // One at a time, act is not asked before it waits; at once, its early answer is set aside.
      if (concurrency === 1) expect(calls.map((c) => c.node)).toEqual(['scout', 'act']);
    }
  });

  it('refuses an edge into a node that ran before, saying which node ran when', async () => {
    const flow = flowOf([
      { name: 'act', prompt: 'Act.' },
      { name: 'wait', prompt: 'Wait.', dependencies: ['act'] },
      {
        name: 'scout',
        prompt: 'Look around.',
        afterQuery: {
          code: 'for (const to of ["act", "scout", "wait"]) try { flow.addEdge("scout", to); } catch (e) { db[to] = e.message; } answer',
        },
      },
    ]);
    const { state, report } = await pass(flow, { concurrency: 1 });
    expect(state.database.act).toBe(
      'flow: add edge scout → act refused: "act" runs in step 1 too, before "scout" in the flow\'s order; its inputs cannot change',
    );
    expect(state.database.scout).toBe(
      'flow: add edge scout → scout refused: "scout" is running now; its inputs cannot change',
    );
    expect(state.database.wait).toBeUndefined();
    expect(report.complete).toBe(true);
  });

  it('refuses an edge that would close a cycle, naming the cycle', async () => {
    const flow = flowOf([
      {
        name: 'start',
        prompt: 's',
        afterQuery: { code: 'try { flow.addEdge("c", "b"); } catch (e) { db.refused = e.message; } answer' },
      },
      { name: 'b', prompt: 'b', dependencies: ['start'] },
      { name: 'c', prompt: 'c', dependencies: ['b'] },
    ]);
    const { state } = await pass(flow);
    expect(state.database.refused).toContain('it would close a cycle: b → c → b');
  });

  it('names a cycle in the file', () => {
    const flow = flowOf([
      { name: 'a', prompt: 'a', dependencies: ['c'] },
      { name: 'b', prompt: 'b', dependencies: ['a'] },
      { name: 'c', prompt: 'c', dependencies: ['b'] },
    ]);
    expect(findCycle(baseStructure(flow))).toEqual(['a', 'b', 'c', 'a']);
  });

  it('skips a node by reusing its last output, and reports the tokens saved', async () => {
    const flow = flowOf([
      {
        name: 'gate',
        prompt: 'Update the plan?',
        afterQuery: { code: 'if (answer === "no") flow.skip("planner"); answer' },
      },
      { name: 'planner', prompt: 'Plan.', dependencies: ['gate'] },
      { name: 'act', prompt: 'Act.', dependencies: ['planner'] },
    ]);
    const first = await pass(flow, { answer: (node) => (node === 'gate' ? 'yes' : `answer of ${node}`) });
    expect(first.report.savedTokens).toBe(0);
    const second = await pass(flow, {
      state: first.state,
      answer: (node) => (node === 'gate' ? 'no' : `fresh ${node}`),
    });
    expect(second.calls.map((c) => c.node)).toEqual(['gate', 'act']);
    expect(second.report.results.planner).toMatchObject({
      status: 'reused',
      output: 'answer of planner',
      savedTokens: 15,
    });
    expect(second.report.savedTokens).toBe(15);
    expect(second.report.outputs.act).toBe('fresh act');
  });

  it('refuses to skip a node that has no earlier output', async () => {
    const flow = flowOf([
      {
        name: 'gate',
        prompt: 'g',
        afterQuery: { code: 'try { flow.skip("planner"); } catch (e) { db.refused = e.message; } answer' },
      },
      { name: 'planner', prompt: 'p', dependencies: ['gate'] },
    ]);
    const { state, report } = await pass(flow);
    expect(state.database.refused).toContain('"planner" has no output from an earlier pass to reuse');
    expect(report.results.planner!.status).toBe('done');
  });

  it('refuses a saved pass whose changes cannot be made, as a hand-edited run file may hold', async () => {
    const flow = flowOf([
      { name: 'a', prompt: 'a' },
      { name: 'b', prompt: 'b', dependencies: ['a'] },
    ]);
    const state = newFlowRunState(flow);
    state.current = {
      pass: 1,
      inputs: {},
      steps: 0,
      results: {},
      changes: [{ op: 'skip', node: 'b' }],
      startedAt: new Date().toISOString(),
    };
    await expect(pass(flow, { state })).rejects.toThrow(
      'holds a change that cannot be made: skip b: "b" has no output from an earlier pass to reuse',
    );
    state.current.changes = [{ op: 'add-edge', from: 'b', to: 'a' }];
    await expect(pass(flow, { state })).rejects.toThrow('it would close a cycle: a → b → a');
  });

  it('goes on from the last saved step after a stop, without asking the finished nodes again', async () => {
    const chain = flowOf([
      { name: 'one', prompt: '1' },
      { name: 'two', prompt: '2', dependencies: ['one'] },
      { name: 'three', prompt: '3', dependencies: ['two'] },
    ]);
    const controller = new AbortController();
    const first = await pass(chain, {
      signal: controller.signal,
      delayMs: 20,
      answer: (node) => {
        if (node === 'one') setTimeout(() => controller.abort(), 5);
        return `answer of ${node}`;
      },
    });
    expect(first.report.interrupted).toBe(true);
    // The state as saved, read back as a new process would.
    const saved = flowRunStateSchema.parse(JSON.parse(first.saves.at(-1)!));
    expect(Object.keys(saved.current!.results)).toEqual(['one']);
    const resumed = await pass(chain, { state: saved });
    expect(resumed.calls.map((c) => c.node)).toEqual(['two', 'three']);
    expect(resumed.report.complete).toBe(true);
    expect(resumed.state.current).toBeUndefined();
    expect(resumed.state.passes).toBe(1);
  });
});
