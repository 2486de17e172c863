/**
 * The embedded model's threads: by default the cores this process may use less those other work keeps
 * busy, so a loaded machine gets one thread rather than threads that wait on each other at every step.
 */
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { requestedThreads, threadsFor } from '../../src/llm/local/threads.js';

const idle = { parallelism: 8, quota: undefined, load: 0 };

describe('the default thread count', () => {
  it('takes every physical core of an idle machine', () => {
    expect(threadsFor(8, idle)).toBe(8);
  });

  it('takes one thread when other work keeps every core busy', () => {
    expect(threadsFor(2, { parallelism: 2, quota: undefined, load: 12.9 })).toBe(1);
  });

  it('leaves the cores other work uses to it', () => {
    expect(threadsFor(8, { ...idle, load: 5.2 })).toBe(3);
  });

  it('never takes more than the CPUs the process may run on or its container may use', () => {
    expect(threadsFor(16, { ...idle, parallelism: 4 })).toBe(4);
    expect(threadsFor(16, { ...idle, quota: 2 })).toBe(2);
  });

  it('never takes more than this machine gives, read as it is now', () => {
    expect(threadsFor(64)).toBeLessThanOrEqual(availableParallelism());
    expect(threadsFor(64)).toBeGreaterThanOrEqual(1);
  });
});

describe('META_AGENT_LOCAL_THREADS', () => {
  it('sets the count, or leaves it to the machine when unset or auto', () => {
    expect(requestedThreads({ META_AGENT_LOCAL_THREADS: '3' })).toBe(3);
    expect(requestedThreads({})).toBeUndefined();
    expect(requestedThreads({ META_AGENT_LOCAL_THREADS: 'auto' })).toBeUndefined();
  });

  it('refuses what is not a whole number of threads, as a usage error', () => {
    for (const value of ['0', 'two', '1.5']) {
      expect(() => requestedThreads({ META_AGENT_LOCAL_THREADS: value })).toThrow(
        expect.objectContaining({ exitCode: 2, message: `META_AGENT_LOCAL_THREADS is "${value}"` }),
      );
    }
  });
});
