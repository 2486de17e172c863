import { describe, expect, it } from 'vitest';
import { graphMayRunCode } from '../../src/cli/sandbox-process.js';

const graphOf = (...nodes: unknown[]) => ({ nodes });
const chat = {
  name: 'ask',
  action: 'chat',
  instruction: 'Ask.',
  transitions: ['ask', 'quit', '$next', 'p.*'],
};

describe('whether a graph may run code (and so needs the sandbox process)', () => {
  it('is false for nodes that only talk, think, set prompts or branch by the classifier', () => {
    expect(
      graphMayRunCode(
        graphOf(
          chat,
          { name: 't', action: 'thought', transitions: ['return'] },
          { name: 'p', action: 'set_prompt', instruction: 'Be kind.' },
          { name: 'i', action: 'chat_exact', conditionInterjection: 'The user is angry.' },
        ),
      ),
    ).toBe(false);
  });

  it('is true for a code node, a function node, a boolean condition and a returned expression', () => {
    expect(graphMayRunCode(graphOf(chat, { name: 'c', action: 'code', instruction: 'x = 1' }))).toBe(true);
    expect(graphMayRunCode(graphOf({ name: 'f', action: 'local_function', instruction: 'y = g()' }))).toBe(
      true,
    );
    expect(graphMayRunCode(graphOf({ name: 'p.a', action: 'chat', booleanCondition: 'n > 1' }))).toBe(true);
    expect(graphMayRunCode(graphOf({ name: 'r', action: 'thought', transitions: ['return n + 1'] }))).toBe(
      true,
    );
  });

  it('is true for whatever it cannot read: the run decides what it is', () => {
    expect(graphMayRunCode(null)).toBe(true);
    expect(graphMayRunCode({ nodes: 'none' })).toBe(true);
    expect(graphMayRunCode(graphOf('node'))).toBe(true);
    expect(graphMayRunCode(graphOf({ name: 'x' }))).toBe(true);
    expect(graphMayRunCode(graphOf({ name: 'x', action: 'chat', transitions: 'quit' }))).toBe(true);
  });
});
