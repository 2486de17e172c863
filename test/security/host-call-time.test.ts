/**
 * The sandbox's time limit bounds a code node's wall time, host calls included: isolated-vm counts only
 * the isolate's own time, so without this a loop over a costly host function would never be stopped.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Sandbox } from '../../src/sandbox/index.js';
import { converse, graphOf, noScript } from '../support/agents.js';
import { failure, where } from '../sandbox/helpers.js';

/** Blocks the thread for `ms` without using the isolate's CPU, as a slow host function does. */
function hold(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

let sandbox: Sandbox | undefined;
afterEach(() => sandbox?.dispose());

describe('time spent in synchronous host functions', () => {
  it('counts toward the limit, even when the code catches every error', async () => {
    sandbox = await Sandbox.create({ timeoutMs: 200 });
    let calls = 0;
    sandbox.expose('slow', {
      call: () => {
        calls += 1;
        hold(20);
        return calls;
      },
    });
    const error = await failure(sandbox.runCode('for (;;) { try { slow.call(); } catch {} }', {}, where));
    expect(error.kind).toBe('timeout');
    expect(error.message).toContain('code ran longer than 200 ms');
    // Each call holds 20 ms: the limit (plus the watchdog's grace) stops the loop after some tens.
    expect(calls).toBeLessThan(100);
  });

  it('leaves the sandbox usable for the next evaluation', async () => {
    sandbox = await Sandbox.create({ timeoutMs: 100 });
    sandbox.expose('slow', { call: () => hold(30) });
    await failure(sandbox.runCode('for (;;) slow.call();', {}, where));
    expect((await sandbox.runCode('1 + 1', {}, where)).value).toBe(2);
  });

  it('does not cut short code that calls host functions briefly', async () => {
    sandbox = await Sandbox.create({ timeoutMs: 1000 });
    sandbox.expose('quick', { call: (n: unknown) => Number(n) + 1 });
    const { value } = await sandbox.runCode(
      'let n = 0; for (let i = 0; i < 1000; i++) n = quick.call(n); n',
      {},
      where,
    );
    expect(value).toBe(1000);
  });
});

describe('a self-referential code node reading a large graph in a loop', () => {
  it('is stopped by its time limit', async () => {
    const nodes = Array.from({ length: 2000 }, (_, i) => ({
      name: `n${i}`,
      action: 'chat_exact' as const,
      instruction: `Node ${i}.`,
      transitions: [`n${(i + 1) % 2000}`],
    }));
    const graph = graphOf(
      [
        {
          name: 'start1',
          action: 'code',
          instruction: 'for (;;) { for (const { name } of self.nodes()) self.getNode(name); }',
          transitions: ['n0'],
        },
        ...nodes,
      ],
      { selfReferential: true, sandbox: { timeoutMs: 300, memoryMb: 64 } },
    );
    await expect(converse(graph, noScript, [undefined], { selfReferential: true })).rejects.toThrow(
      'code ran longer than 300 ms',
    );
  });
});
