import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { pythonStr } from '../../src/engine/python-str.js';

const hasPython = spawnSync('python3', ['--version']).status === 0;

/** Values as json.loads gives them to Python: every one crosses as its JSON text. */
const SAMPLES: unknown[] = [
  [-2, 8, 14.5, 19],
  true,
  false,
  null,
  { k: 1, b: [1, 'x'] },
  0,
  -7,
  2 ** 53 - 1,
  0.1,
  1 / 3,
  -2.5,
  123.456,
  12345678.9,
  1e15 + 0.5,
  0.0001,
  0.00012,
  1e-5,
  -1e-7,
  1.5e-300,
  5e-324,
  'plain text',
  '',
  ["it's", 'say "hi"', `both ' and "`, '', 'x'],
  ['a\nb\tc\\d\re', '\x00\x07\x1b\x7f', '\u0085\u00a0\u00ad', '\u200b\u2028\u2029\u3000', '\ud800 \udfff'],
  ['é ß 中文 😀 \u{1F600}', 'tab\there', "\\'"],
  { "it's": [null, true, false, 1.5], 'with "quotes"': {}, '': [] },
  [[], {}, [[]], { a: { b: { c: [1, [2, [3]]] } } }],
  { nested: ['a\nb', { 'k\t': 'v\x01' }] },
  // Around every switch between positional and exponent notation.
  ...Array.from({ length: 36 }, (_, i) => i - 20).flatMap((e) => [10 ** e, 1.2345 * 10 ** e, -(10 ** e) / 7]),
];

describe('pythonStr: Python’s str() of a JSON value', () => {
  it('shows lists, booleans, None, dicts and nested strings as Python does', () => {
    expect(pythonStr([-2, 8, 14.5, 19])).toBe('[-2, 8, 14.5, 19]');
    expect(pythonStr(true)).toBe('True');
    expect(pythonStr(false)).toBe('False');
    expect(pythonStr(null)).toBe('None');
    expect(pythonStr({ k: 1, b: [1, 'x'] })).toBe("{'k': 1, 'b': [1, 'x']}");
    expect(pythonStr('a top-level string')).toBe('a top-level string');
    expect(pythonStr(["it's", 'say "hi"', `both ' and "`])).toBe(`["it's", 'say "hi"', 'both \\' and "']`);
    expect(pythonStr(['a\nb\t\\', '\x00\x7f', '\u200b', '\u{1F600}'])).toBe(
      "['a\\nb\\t\\\\', '\\x00\\x7f', '\\u200b', '😀']",
    );
  });

  it('writes floats as Python’s repr', () => {
    expect(pythonStr(0.1)).toBe('0.1');
    expect(pythonStr(1e-5)).toBe('1e-05');
    expect(pythonStr(0.0001)).toBe('0.0001');
    expect(pythonStr(1.5e-300)).toBe('1.5e-300');
    expect(pythonStr(-0)).toBe('-0.0');
  });

  it('shows a whole number as an int while a double holds it exactly, and as a float past that', () => {
    // JSON has one number type: Python's 2.0 crosses as 2, and there is no telling them apart.
    expect(pythonStr(2)).toBe('2');
    expect(pythonStr(2 ** 53 - 1)).toBe('9007199254740991');
    expect(pythonStr(1e16)).toBe('1e+16');
    expect(pythonStr(2 ** 53)).toBe('9007199254740992.0');
    expect(pythonStr(1.7976931348623157e308)).toBe('1.7976931348623157e+308');
  });

  it.skipIf(!hasPython)(
    `gives what python3 gives for every sample${hasPython ? '' : ' (skipped: no python3 on this machine)'}`,
    () => {
      const script = 'import json, sys\nprint(json.dumps([str(v) for v in json.loads(sys.stdin.read())]))';
      const run = spawnSync('python3', ['-c', script], { input: JSON.stringify(SAMPLES), encoding: 'utf8' });
      expect(run.stderr).toBe('');
      const expected = JSON.parse(run.stdout) as string[];
      expect(SAMPLES.map(pythonStr)).toEqual(expected);
    },
  );
});
