import { describe, expect, it } from 'vitest';
import { latestValues, MAX_SET_CHARS, newAiplState, setValue } from '../../src/aipl/state.js';

describe('setting AIPL state from outside a template', () => {
  it('stores a value as an update stores an answer, the name lower-cased, in the state’s turn', () => {
    const state = { ...newAiplState(), turn: 3 };
    setValue(state, 'Environment.Dangers', 'a storm', 'set by node watch');
    setValue(state, 'cookie.count', 12, 'set by node count');
    setValue(state, 'user.info', { kids: 2 }, 'set by node count');
    expect(state.log).toEqual([
      { name: 'environment.dangers', value: 'a storm', turn: 3, question: 'set by node watch' },
      { name: 'cookie.count', value: '12', turn: 3, question: 'set by node count' },
      { name: 'user.info', value: '{"kids":2}', turn: 3, question: 'set by node count' },
    ]);
    expect(latestValues(state.log).get('environment.dangers')).toBe('a storm');
  });

  it('refuses a name that is not ns.key, a vars. name, no value and a value too long, saying why', () => {
    const state = newAiplState();
    expect(() => setValue(state, 'dangers', 'x', 's')).toThrow(
      'aipl.set: "dangers" is not a name like "ns.key"',
    );
    expect(() => setValue(state, 'vars.name', 'x', 's')).toThrow('is an autogram variable');
    expect(() => setValue(state, 'a.b', undefined, 's')).toThrow('aipl.set: a.b needs a value');
    expect(() => setValue(state, 'a.b', 'x'.repeat(MAX_SET_CHARS + 1), 's')).toThrow(
      `at most ${MAX_SET_CHARS}`,
    );
    expect(state.log).toEqual([]);
  });
});
