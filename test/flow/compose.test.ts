import { describe, expect, it } from 'vitest';
import { lintFlow } from '../../src/flow/lint.js';
import { newFlowRunState } from '../../src/flow/run-state.js';
import { runFlowPass } from '../../src/flow/runner.js';
import type { FlowFile } from '../../src/flow/schema.js';
import { flowModel, flowOf, recordedBus } from '../support/flow.js';

async function pass(flow: FlowFile, inputs: Record<string, string> = {}) {
  const { model, calls } = flowModel();
  const { model: reasoner, calls: reasoned } = flowModel((node) => `reasoned ${node}`);
  const { bus } = recordedBus();
  const report = await runFlowPass(
    {
      flow,
      state: newFlowRunState(flow),
      model,
      nodeModels: new Map([['reason', { ...reasoner, modelName: 'reasoner' }]]),
      events: bus,
    },
    inputs,
  );
  return { report, calls, reasoned };
}

const messages = (flow: FlowFile) =>
  lintFlow(flow).map((f) => `${f.severity} ${f.node ?? '(flow)'}: ${f.message}`);

describe('composing a node', () => {
  it('builds the messages a compose list names: system, manual, history, chosen answers, the prompt last', async () => {
    const flow = flowOf(
      [
        { name: 'look', prompt: 'What do you see?' },
        { name: 'count', prompt: 'How many?' },
        {
          name: 'act',
          prompt: 'Act on $db.goal$.',
          dependencies: ['look', 'count'],
          system: 'You act for $db.goal$.',
          compose: [
            { role: 'system', content: 'Manual: $db.manual$' },
            { history: '$db.steps$', last: 2 },
            { dependencies: ['count'] },
            { role: 'user', content: 'Seen: $out.look$' },
            { role: 'user', content: '$prompt$' },
          ],
        },
      ],
      {
        config: { system: 'The flow-wide system prompt.' },
        database: {
          goal: 'wood',
          manual: 'do collects',
          steps: ['step 1', { role: 'assistant', content: 'moved' }, 'step 3'],
        },
      },
    );
    const { report, calls } = await pass(flow);
    expect(report.complete).toBe(true);
    expect(calls.find((call) => call.node === 'act')!.messages).toEqual([
      { role: 'system', content: 'You act for wood.' },
      { role: 'system', content: 'Manual: do collects' },
      { role: 'assistant', content: 'moved' },
      { role: 'user', content: 'step 3' },
      { role: 'user', content: 'How many?' },
      { role: 'assistant', content: 'answer of count' },
      { role: 'user', content: 'Seen: answer of look' },
      { role: 'user', content: 'Act on wood.' },
    ]);
    expect(calls.find((call) => call.node === 'look')!.messages[0]).toEqual({
      role: 'system',
      content: 'The flow-wide system prompt.',
    });
  });

  it('fails the node, naming the key, when a history is missing or not a list', async () => {
    const flow = flowOf(
      [
        {
          name: 'a',
          prompt: 'x',
          compose: [{ history: '$db.steps$' }, { role: 'user', content: '$prompt$' }],
        },
      ],
      { database: { steps: 'not a list' } },
    );
    const { report } = await pass(flow);
    expect(report.results.a).toMatchObject({ status: 'failed' });
    expect(report.results.a!.detail).toContain('$db.steps$ is not a list');
  });

  it('asks each node of the model it names, and the report says which answered', async () => {
    const flow = flowOf(
      [
        { name: 'quick', prompt: 'q' },
        { name: 'deep', prompt: 'd', model: 'reason', dependencies: ['quick'] },
        { name: 'odd', prompt: 'o', model: 'unresolved' },
      ],
      { config: { models: { reason: { model: 'gpt-4o' } } } },
    );
    const { report, calls, reasoned } = await pass(flow);
    expect(calls.map((call) => call.node)).toEqual(['quick']);
    expect(reasoned.map((call) => call.node)).toEqual(['deep']);
    expect(report.results.quick).toMatchObject({ status: 'done', model: 'flow-test' });
    expect(report.results.deep).toMatchObject({ status: 'done', model: 'reasoner', output: 'reasoned deep' });
    expect(report.results.odd).toMatchObject({ status: 'failed' });
    expect(report.results.odd!.detail).toContain('its model "unresolved" was not resolved');
  });
});

describe('order-only edges (after)', () => {
  it('waits for the nodes it runs after, without their answers, and runs even when one failed', async () => {
    const flow = flowOf([
      { name: 'write', prompt: 'w', afterQuery: { code: 'throw new Error("no")' } },
      { name: 'note', prompt: 'n' },
      { name: 'read', prompt: 'r', after: ['write', 'note'] },
    ]);
    const { report, calls } = await pass(flow);
    expect(report.results.write).toMatchObject({ status: 'failed' });
    expect(report.results.read).toMatchObject({ status: 'done' });
    const order = calls.map((call) => call.node);
    expect(order.indexOf('read')).toBeGreaterThan(order.lastIndexOf('write'));
    expect(calls.find((call) => call.node === 'read')!.messages).toEqual([{ role: 'user', content: 'r' }]);
  });

  it('lints them: a cycle through them, a name that is no node, an answer read without a dependency', () => {
    const flow = flowOf([
      { name: 'a', prompt: 'a', after: ['b'] },
      { name: 'b', prompt: 'Use $out.a$.', dependencies: ['a'], after: ['nope'] },
      { name: 'c', prompt: 'Use $out.a$.', after: ['a'] },
      { name: 'd', prompt: 'd', compose: [{ dependencies: ['a'] }, { role: 'user', content: '$prompt$' }] },
    ]);
    expect(messages(flow)).toEqual([
      'error b: it runs after "nope", which is not a node',
      'error c: its prompt uses $out.a$, but it does not depend on "a"',
      'error d: its compose list shows the answer of "a", but it does not depend on "a"',
      'error (flow): the dependencies form a cycle: a → b → a',
    ]);
    expect(lintFlow(flow).find((f) => f.node === 'c')!.hint).toContain('"after" only orders the nodes');
  });

  it('refuses a node model that cannot answer or that names a file', () => {
    const flow = flowOf([
      { name: 'a', prompt: 'a', model: 'embedder' },
      { name: 'b', prompt: 'b', model: 'local:/tmp/x.gguf' },
      { name: 'c', prompt: 'c', model: 'local' },
    ]);
    expect(messages(flow)).toEqual([
      'error a: its model is the embedder, which does not answer prompts',
      'error b: its model is "local:/tmp/x.gguf": a flow file may ask for the embedded model ("local") but not name a GGUF',
    ]);
  });
});
