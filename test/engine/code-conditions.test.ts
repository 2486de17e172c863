/**
 * A code node whose only transition is a wildcard has its members' conditions evaluated in the same
 * call into the sandbox as its code. What a run does must not show it: the branch taken, the events,
 * and each error with the node it belongs to.
 */
import { describe, expect, it } from 'vitest';
import { Interpreter, NodeError } from '../../src/engine/interpreter.js';
import { EventBus, type AgentEvent } from '../../src/events.js';
import type { NodeSpecInput } from '../../src/graph/schema.js';
import { graphOf, noModels } from '../support/agents.js';

/** Calls `run(…args)` of a graph made of `nodes`, and returns its value or error and the events. */
async function call(
  nodes: NodeSpecInput[],
  args: unknown[],
): Promise<{ outcome: unknown; events: AgentEvent[] }> {
  const events: AgentEvent[] = [];
  const bus = new EventBus();
  bus.on((event) => events.push(event));
  const agent = await Interpreter.create({
    graph: graphOf(nodes, { sandbox: { timeoutMs: 300, memoryMb: 64 } }),
    models: noModels,
    events: bus,
  });
  try {
    const outcome = await agent.applyFn('run', args).then(
      ({ value }) => value,
      (error: unknown) => error,
    );
    return { outcome, events };
  } finally {
    agent.dispose();
  }
}

/** The variables set and the transitions taken, in order. */
function steps(events: AgentEvent[]): string[] {
  return events.flatMap((event) => {
    if (event.type === 'variable.set') return [`${event.name}=${JSON.stringify(event.value)}`];
    if (event.type === 'transition') return [`${event.from}->${event.to}`];
    return [];
  });
}

describe('a code node and the conditions after it', () => {
  it('takes the first member whose condition holds over what the code left', async () => {
    const nodes: NodeSpecInput[] = [
      { name: 'run(n)', action: 'code', instruction: 'seen = []; i = 0', transitions: ['step'] },
      { name: 'step', action: 'code', instruction: 'i = i + 1; seen.push(i)', transitions: ['more.*'] },
      { name: 'more.a', action: 'transition', booleanCondition: 'i === 2', transitions: ['step'] },
      { name: 'more.b', action: 'transition', booleanCondition: 'seen.length < n', transitions: ['step'] },
      { name: 'more.c', action: 'transition', transitions: ['return seen'] },
    ];
    const { outcome, events } = await call(nodes, [4]);
    expect(outcome).toEqual([1, 2, 3, 4]);
    expect(steps(events).filter((s) => s.startsWith('step->'))).toEqual([
      'step->more.b',
      'step->more.a',
      'step->more.b',
      'step->more.c',
    ]);
  });

  it('reports a condition that fails for its own node, after the code node it follows', async () => {
    const nodes: NodeSpecInput[] = [
      { name: 'run(n)', action: 'code', instruction: 'i = n + 1', transitions: ['check.*'] },
      { name: 'check.a', action: 'transition', booleanCondition: 'i > n && missing', transitions: ['quit'] },
      { name: 'check.b', action: 'transition', transitions: ['return i'] },
    ];
    const { outcome, events } = await call(nodes, [1]);
    expect(outcome).toBeInstanceOf(NodeError);
    expect((outcome as NodeError).cause).toMatchObject({ kind: 'runtime', node: 'check.a' });
    expect((outcome as Error).message).toMatch(/^node "check\.a": .*missing is not defined/);
    expect(steps(events)).toEqual(['i=2']);
  });

  it('stops a condition that runs too long, naming its node, once the code node is done', async () => {
    const nodes: NodeSpecInput[] = [
      { name: 'run(n)', action: 'code', instruction: 'i = n + 1', transitions: ['check.*'] },
      { name: 'check.a', action: 'transition', booleanCondition: 'i < n', transitions: ['quit'] },
      {
        name: 'check.b',
        action: 'transition',
        booleanCondition: '(() => { while (true) {} })()',
        transitions: ['quit'],
      },
      { name: 'check.c', action: 'transition', transitions: ['return i'] },
    ];
    const { outcome, events } = await call(nodes, [1]);
    expect(outcome).toBeInstanceOf(NodeError);
    expect((outcome as NodeError).cause).toMatchObject({ kind: 'timeout', node: 'check.b' });
    expect(steps(events)).toEqual(['i=2']);
  });
});
