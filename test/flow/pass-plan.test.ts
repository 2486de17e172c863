import { describe, expect, it } from 'vitest';
import { applyChange, baseStructure, type PassStructure } from '../../src/flow/changes.js';
import {
  changedKeys,
  changeLimits,
  commitChanges,
  nextMove,
  nodeEvent,
  nodeRequest,
  resumedStructure,
  unansweredResult,
} from '../../src/flow/pass-plan.js';
import { newFlowRunState, type NodeResult, type PassState } from '../../src/flow/run-state.js';
import { flowOf } from '../support/flow.js';

const chain = flowOf(
  [
    { name: 'a', prompt: 'A about $db.topic$?' },
    { name: 'b', prompt: 'B?', dependencies: ['a'] },
    { name: 'c', prompt: 'C?', dependencies: ['b'] },
    { name: 'd', prompt: 'D?' },
  ],
  { database: { topic: 'moving' }, config: { system: 'You answer about $db.topic$.' } },
);

function passOf(results: Record<string, NodeResult> = {}, changes: PassState['changes'] = []): PassState {
  return { pass: 1, inputs: {}, steps: 0, results, changes, startedAt: '2026-01-01T00:00:00.000Z' };
}

const done = (output: string, prompt = `${output}?`): NodeResult => ({
  status: 'done',
  output,
  prompt,
  tokens: 15,
  attempts: 1,
});
const failed: NodeResult = { status: 'failed', tokens: 0, attempts: 3, detail: 'no answer' };

describe('what a flow pass does next', () => {
  it('runs the nodes whose dependencies have outputs, in the flow’s order, and finishes when none is left', () => {
    const structure = baseStructure(chain);
    expect(nextMove(structure, passOf(), {})).toEqual({ kind: 'run', nodes: ['a', 'd'] });
    expect(nextMove(structure, passOf({ a: done('a'), d: done('d') }), {})).toEqual({
      kind: 'run',
      nodes: ['b'],
    });
    const all = { a: done('a'), b: done('b'), c: done('c'), d: done('d') };
    expect(nextMove(structure, passOf(all), {})).toEqual({ kind: 'finish' });
  });

  it('reuses skipped nodes before anything else, with their last output and the tokens that saves', () => {
    const structure = applyChange(baseStructure(chain), { op: 'skip', node: 'b' });
    const last = { b: { output: 'old b', prompt: 'B?', tokens: 40, pass: 1 } };
    expect(nextMove(structure, passOf({ a: done('a') }), last)).toEqual({
      kind: 'reuse',
      settled: [
        {
          node: 'b',
          result: {
            status: 'reused',
            output: 'old b',
            prompt: 'B?',
            tokens: 0,
            attempts: 0,
            savedTokens: 40,
          },
        },
      ],
    });
  });

  it('blocks the nodes after a failed one, one move at a time, naming the failed node at the root', () => {
    const structure = baseStructure(chain);
    const first = nextMove(structure, passOf({ a: failed, d: done('d') }), {});
    const blockedByA = {
      status: 'blocked',
      tokens: 0,
      attempts: 0,
      upstream: 'a',
      detail: 'skipped: upstream failed (a)',
    };
    expect(first).toEqual({ kind: 'block', settled: [{ node: 'b', result: blockedByA }] });
    const second = nextMove(structure, passOf({ a: failed, b: blockedByA as NodeResult, d: done('d') }), {});
    expect(second).toEqual({ kind: 'block', settled: [{ node: 'c', result: blockedByA }] });
  });
});

describe('what a node is asked', () => {
  it('sends the system message, each dependency as an earlier turn, then the prompt', () => {
    const structure = baseStructure(chain);
    const request = nodeRequest(chain, structure, passOf({ a: done('answer a', 'A?') }), 'b', { topic: 'x' });
    expect(request).toEqual({
      ok: true,
      prompt: 'B?',
      messages: [
        { role: 'system', content: 'You answer about x.' },
        { role: 'user', content: 'A?' },
        { role: 'assistant', content: 'answer a' },
        { role: 'user', content: 'B?' },
      ],
      outputs: new Map([['a', 'answer a']]),
      unset: [],
    });
  });

  it('reads a database value that is not there as None, as AgentKit does, and lists the references', () => {
    const request = nodeRequest(chain, baseStructure(chain), passOf(), 'a', {});
    expect(request).toMatchObject({
      ok: true,
      prompt: 'A about None?',
      messages: [
        { role: 'system', content: 'You answer about None.' },
        { role: 'user', content: 'A about None?' },
      ],
      unset: ['$db.topic$'],
    });
  });

  it('fails a node whose prompt cannot be made, saying why', () => {
    const flow = flowOf([
      { name: 'a', prompt: 'A?' },
      { name: 'b', prompt: 'After $out.a$?' },
    ]);
    const request = nodeRequest(flow, baseStructure(flow), passOf(), 'b', {});
    expect(request).toEqual({
      ok: false,
      result: {
        status: 'failed',
        tokens: 0,
        attempts: 0,
        detail: 'its prompt: $out.a$ names "a", which is not a dependency of this node',
      },
    });
  });
});

describe('how a node without an accepted answer ends', () => {
  const node = flowOf([{ name: 'n', prompt: 'N?', fallback: { n: 0 } }]).nodes[0]!;
  const ended = {
    node,
    prompt: 'N?',
    tokens: 30,
    tries: 2,
    lastProblem: 'not JSON',
    error: 'no usable answer',
  };

  it('takes the fallback when every answer was rejected', () => {
    expect(unansweredResult({ ...ended, rejections: 2 })).toEqual({
      status: 'done',
      output: { n: 0 },
      prompt: 'N?',
      tokens: 30,
      attempts: 2,
      fellBack: true,
      detail: 'fallback used: 2 answers were rejected, the last because not JSON',
    });
  });

  it('fails when an answer was never rejected (the model or the code failed), or there is no fallback', () => {
    expect(unansweredResult({ ...ended, rejections: 1, error: 'server down' })).toEqual({
      status: 'failed',
      tokens: 30,
      attempts: 1,
      detail: 'server down',
    });
    const bare = flowOf([{ name: 'n', prompt: 'N?' }]).nodes[0]!;
    expect(unansweredResult({ ...ended, node: bare, rejections: 2 })).toMatchObject({ status: 'failed' });
  });
});

describe('what the user is told of a settled node', () => {
  it('gives the output and tokens of a done node, and says when its fallback was used', () => {
    expect(nodeEvent('a', done('x'))).toEqual({
      type: 'flow.node',
      node: 'a',
      status: 'done',
      output: 'x',
      tokens: 15,
      attempt: 1,
    });
    const fellBack: NodeResult = { ...done('x'), fellBack: true, detail: 'fallback used' };
    expect(nodeEvent('a', fellBack)).toEqual({
      type: 'flow.node',
      node: 'a',
      status: 'done',
      output: 'x',
      tokens: 15,
      detail: 'fallback used',
    });
  });

  it('gives the tokens a reused node saved, and why a node failed or was blocked', () => {
    const reused: NodeResult = {
      status: 'reused',
      output: 'x',
      prompt: 'p',
      tokens: 0,
      attempts: 0,
      savedTokens: 9,
    };
    expect(nodeEvent('a', reused)).toEqual({
      type: 'flow.node',
      node: 'a',
      status: 'reused',
      output: 'x',
      tokens: 9,
    });
    expect(nodeEvent('a', failed)).toEqual({
      type: 'flow.node',
      node: 'a',
      status: 'failed',
      detail: 'no answer',
      tokens: 0,
    });
    const blocked: NodeResult = {
      status: 'blocked',
      tokens: 0,
      attempts: 0,
      upstream: 'z',
      detail: 'skipped',
    };
    expect(nodeEvent('a', blocked)).toEqual({
      type: 'flow.node',
      node: 'a',
      status: 'blocked',
      detail: 'skipped',
    });
  });
});

describe('what a step commits', () => {
  it('finds the database keys a node’s code added, changed or removed', () => {
    expect(changedKeys({ a: 1, b: { c: 2 }, gone: true }, { a: 1, b: { c: 3 }, added: [] })).toEqual([
      'b',
      'gone',
      'added',
    ]);
  });

  it('makes one node’s changes together, or refuses them all with the reason', () => {
    const structure: PassStructure = baseStructure(chain);
    const limits = changeLimits(newFlowRunState(chain), () => undefined);
    const made = commitChanges(structure, [{ op: 'add-edge', from: 'd', to: 'b' }], limits);
    expect(made.ok && made.structure.dependencies.get('b')).toEqual(['a', 'd']);
    const refused = commitChanges(
      structure,
      [
        { op: 'add-edge', from: 'd', to: 'b' },
        { op: 'add-edge', from: 'c', to: 'a' },
      ],
      limits,
    );
    expect(refused).toEqual({ ok: false, reason: 'it would close a cycle: a → b → c → a' });
  });
});

describe('a resumed pass', () => {
  it('makes its saved changes again', () => {
    const state = newFlowRunState(chain);
    state.current = passOf({}, [{ op: 'add-edge', from: 'd', to: 'a' }]);
    expect(resumedStructure(chain, state, {}).dependencies.get('a')).toEqual(['d']);
  });

  it('goes on only on the same flow file and with the same inputs', () => {
    const state = newFlowRunState(chain);
    state.current = { ...passOf(), inputs: { topic: 'moving' } };
    expect(() => resumedStructure(chain, state, { topic: 'other' })).toThrow('began with other inputs');
    state.flowHash = 'another';
    expect(() => resumedStructure(chain, state, {})).toThrow('began on another version of the flow file');
  });
});
