import { beforeAll, describe, expect, it } from 'vitest';
import { closedUrl } from '../support/openai-server.js';
import { runCli } from '../support/run-cli.js';

const FIBONACCI = 'test/fixtures/engine/fibonacci.autogram.json';
const SORT = 'test/fixtures/engine/merge-sort.autogram.json';
const TALLY = 'test/fixtures/engine/tally.autogram.json';
const LOGGING = 'test/fixtures/engine/logging.autogram.json';

/** No model server anywhere: these graphs need none, and no test may probe for a real one. */
let env: Record<string, string>;

beforeAll(async () => {
  env = { META_AGENT_PROBE_URLS: await closedUrl() };
});

const call = (...args: string[]) => runCli(['call', ...args], { env });

describe('meta-agent call', () => {
  it('prints the result of a recursive function as JSON', async () => {
    const result = await call(FIBONACCI, 'fibonacci(10)');
    expect(result).toEqual({ code: 0, stdout: '34\n', stderr: '' });
  });

  it('takes JSON literals as arguments and prints lists as JSON', async () => {
    expect((await call(SORT, 'merge_sort([5, 3, 9, 1, 7])')).stdout).toBe('[1,3,5,7,9]\n');
    expect((await call(SORT, 'merge_sort(["pear", "apple", "fig"])')).stdout).toBe(
      '["apple","fig","pear"]\n',
    );
  });

  it('refuses an unknown function with exit 2, suggesting one and listing the callable nodes', async () => {
    const result = await call(SORT, 'merge_srot([1])');
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `error: ${SORT} has no function merge_srot; did you mean merge_sort?\n` +
        'hint: callable nodes: merge_sort(list), merge(a, b)\n',
    );
  });

  it('refuses an argument that is not JSON, in one line', async () => {
    const result = await call(SORT, 'merge_sort(apple)');
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toBe(
      'error: argument 1 of merge_sort(…) is not a JSON literal: apple',
    );
  });

  it('refuses a call it cannot read, and the wrong number of arguments', async () => {
    const unreadable = await call(SORT, 'merge_sort([1, 2]');
    expect(unreadable.code).toBe(2);
    expect(unreadable.stderr).toMatch(
      /^error: cannot read the call "merge_sort\(\[1, 2\]"\nhint: write it as NAME/,
    );
    const arity = await call(SORT, 'merge_sort([1], [2])');
    expect(arity.code).toBe(2);
    expect(arity.stderr).toBe('error: merge_sort(list) takes 1 argument(s), got 2\n');
  });

  it('says the designer runs through meta-agent design when it is called directly', async () => {
    const result = await call('meta/designer.autogram.json', 'design("a tutor bot")');
    expect(result.code).toBe(1);
    expect(result.stderr.split('\n')[0]).toBe(
      'error: node "design(description)": Error: the designer runs through meta-agent design "DESCRIPTION", ' +
        'which lends it the meta helpers it needs; call cannot (line 1)',
    );
  });

  it('fails with exit 1 naming the node when a function reaches a chat node', async () => {
    const result = await call(TALLY, 'listen(0)');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: node "listen\(n\)": a chat node ran inside a function/);
  });

  it("prints what the function's code printed to stderr, the result alone to stdout", async () => {
    expect(await call(LOGGING, 'halve(8)')).toEqual({
      code: 0,
      stdout: '4\n',
      stderr: '[halve(n)] halving 8\n',
    });
  });

  it('prints what the code printed before it threw, then the error', async () => {
    const result = await call(LOGGING, 'halve(3)');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^\[halve\(n\)\] halving 3\nerror: node "halve\(n\)": Error: 3 is odd/);
  });

  it('names a missing graph file in one line, exit 2', async () => {
    const result = await call('missing.autogram.json', 'f(1)');
    expect(result).toEqual({ code: 2, stdout: '', stderr: 'error: missing.autogram.json: no such file\n' });
  });
});
