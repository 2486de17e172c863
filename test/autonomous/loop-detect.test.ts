import { describe, expect, it } from 'vitest';
import { detectLoop, judgeLoop, type LoopStep } from '../../src/autonomous/loop-detect.js';

type Call = [command: string, args?: Record<string, unknown>, result?: string];

/** Steps numbered from `first`, each with its own result unless one is given. */
function run(calls: Call[], first = 1): LoopStep[] {
  return calls.map(([command, args = {}, result], index) => ({
    step: first + index,
    command,
    args,
    result: result ?? `result ${first + index}`,
  }));
}

const readA: Call = ['read_file', { file: 'a.txt' }];
const readB: Call = ['read_file', { file: 'b.txt' }];
const search: Call = ['search_files', { directory: '.' }];

describe('detectLoop', () => {
  it('finds the same command with the same arguments three times in a row', () => {
    const found = detectLoop(run([search, readA, readA, readA]));
    expect(found).toMatchObject({ kind: 'repeat', steps: [2, 3, 4] });
    expect(found?.message).toBe(
      'You ran read_file {"file":"a.txt"} three times in a row (steps 2, 3, 4). Doing it again will not help: try something different, or call task_complete if the task is done.',
    );
  });

  it('compares arguments whatever the order of their keys, at every depth', () => {
    const one: Call = ['write_to_file', { file: 'a', opts: { x: 1, y: 2 } }];
    const two: Call = ['write_to_file', { opts: { y: 2, x: 1 }, file: 'a' }];
    expect(detectLoop(run([one, two, one]))).toMatchObject({ kind: 'repeat' });
  });

  it('finds two commands taking turns, A-B-A-B', () => {
    const found = detectLoop(run([search, readA, readB, readA, readB]));
    expect(found).toMatchObject({ kind: 'alternation', steps: [2, 3, 4, 5] });
    expect(found?.message).toContain(
      'alternated between read_file {"file":"a.txt"} and read_file {"file":"b.txt"}',
    );
  });

  it('finds different commands that keep getting the same result', () => {
    const missing = 'Error: no such file';
    const found = detectLoop(
      run([
        ['read_file', { file: 'a.txt' }, missing],
        ['read_file', { file: 'b.txt' }, `${missing}\n`],
        ['read_file', { file: 'c.txt' }, missing],
      ]),
    );
    expect(found).toMatchObject({ kind: 'same-result', steps: [1, 2, 3] });
    expect(found?.message).toContain('got the same result from three commands in a row');
    expect(found?.message).toContain('"Error: no such file"');
  });

  it('reports an exact repeat as a repeat, not as the same result', () => {
    const same: Call = ['do_nothing', {}, 'nothing done'];
    expect(detectLoop(run([same, same, same]))).toMatchObject({ kind: 'repeat' });
  });

  it('does not count the same command with different arguments', () => {
    expect(detectLoop(run([readA, readB, ['read_file', { file: 'c.txt' }]]))).toBeUndefined();
  });

  it('does not count A-B-A-C', () => {
    expect(detectLoop(run([readA, readB, readA, search]))).toBeUndefined();
  });

  it('does not count empty results as the same result', () => {
    expect(
      detectLoop(
        run([
          ['a', {}, ' '],
          ['b', {}, ''],
          ['c', {}, '\n'],
        ]),
      ),
    ).toBeUndefined();
  });

  it('needs three steps for a repeat', () => {
    expect(detectLoop(run([readA, readA]))).toBeUndefined();
    expect(detectLoop([])).toBeUndefined();
  });
});

describe('judgeLoop', () => {
  it('lets a run without a loop go on', () => {
    expect(judgeLoop(run([readA, readB, search]), undefined)).toEqual({ verdict: 'ok' });
  });

  it('warns the first time a loop shows', () => {
    expect(judgeLoop(run([readA, readA, readA]), undefined)).toEqual({
      verdict: 'warn',
      message: expect.stringContaining('three times in a row'),
    });
  });

  it('stops when the loop shows again within three steps of the warning', () => {
    // Warned at step 3; the model reads a.txt once more at step 4.
    expect(judgeLoop(run([readA, readA, readA, readA]), 3)).toEqual({
      verdict: 'stop',
      message:
        'Stopped at step 4: the model ran read_file {"file":"a.txt"} three times in a row (steps 2, 3, 4), again within 3 steps of the warning at step 3.',
    });
    expect(judgeLoop(run([readA, readB, readA, readB], 3), 3)).toMatchObject({ verdict: 'stop' });
  });

  it('warns again when the last warning was long ago', () => {
    expect(judgeLoop(run([readA, readA, readA], 10), 3)).toMatchObject({ verdict: 'warn' });
  });
});
