/**
 * AutoGRAMS' Python function graphs run unchanged: every call returns what AutoGRAMS 0.1 returns.
 *
 * The spreadsheets: merge_sort_fn.csv is AutoGRAMS' examples/merge_sort (BSD licence);
 * recursive_fib.csv and merge_sort.csv are what AutoGRAMS' own compiler (autogram_compiler.py,
 * AutogramCompiler through read_autogram and write_autogram of process_autogram.py) makes from its
 * examples/fibonacci/recursive_fib.py and examples/python_merge_sort/merge_sort.py (github.com/autograms/
 * autograms at afb9e31), generated with
 *   /usr/bin/python3 test/fidelity/reference/compile.py REFERENCE_DIR recursive_fib.py test/fixtures/graphs/recursive_fib.csv
 *
 * A call mirrors Autogram.apply_fn (autogram.py, lines 377-497): the arguments become the function's
 * variables, and what the function's last node outputs is the result. Where the reference and a python3
 * with numpy and pandas are on this machine, reference/call.py runs the same calls through AutoGRAMS
 * itself and the test compares with that; else it compares with RECORDED, which call.py printed.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Interpreter } from '../../src/engine/interpreter.js';
import { csvGraph, recordingModels } from '../support/agents.js';
import { runCli } from '../support/run-cli.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CALL = fileURLToPath(new URL('./reference/call.py', import.meta.url));
const FIXTURES = join(ROOT, 'test/fixtures/graphs');

const reference = process.env.AUTOGRAMS_REFERENCE ?? resolve(ROOT, '../shared/reference/autograms-243158a');
const python = ['/usr/bin/python3', 'python3'].find(
  (command) => spawnSync(command, ['-c', 'import numpy, pandas'], { stdio: 'ignore' }).status === 0,
);
const live = existsSync(join(reference, 'autograms')) && python !== undefined;

type Call = [fn: string, args: unknown[]];
/** What AutoGRAMS returned, or the error it raised. */
type Outcome = { value: unknown } | { error: string };

/**
 * The calls, and what AutoGRAMS 0.1 returned for each (call.py, 243158a). fibonacci(n <= 0) prints and
 * ends on a transition node followed by a bare `return`: apply_fn returns that node's variable output,
 * the last agent reply, which is "" in a call with no conversation. merge_sort_fn's merge_sort([]) is
 * left out: its first_half([]) and last_half([]) are both [], so AutoGRAMS recurses forever.
 */
const GRAPHS: { csv: string; calls: [Call, Outcome][] }[] = [
  {
    csv: 'recursive_fib.csv',
    calls: [
      [['fibonacci', [-3]], { value: '' }],
      [['fibonacci', [0]], { value: '' }],
      [['fibonacci', [1]], { value: 0 }],
      [['fibonacci', [2]], { value: 1 }],
      [['fibonacci', [3]], { value: 1 }],
      [['fibonacci', [5]], { value: 3 }],
      [['fibonacci', [10]], { value: 34 }],
    ],
  },
  {
    csv: 'merge_sort.csv',
    calls: [
      [['merge_sort', [[8, 19, -2, 14.5]]], { value: [-2, 8, 14.5, 19] }],
      [['merge_sort', [[]]], { value: [] }],
      [['merge_sort', [[3]]], { value: [3] }],
      [['merge_sort', [[5, 1, 4, 1, 5, 9, 2, 6]]], { value: [1, 1, 2, 4, 5, 5, 6, 9] }],
      [['merge_sort', [[2, 1]]], { value: [1, 2] }],
      [
        [
          'merge',
          [
            [1, 4],
            [2, 3],
          ],
        ],
        { value: [1, 2, 3, 4] },
      ],
      [['merge', [[], [2]]], { value: [2] }],
    ],
  },
  {
    csv: 'merge_sort_fn.csv',
    calls: [
      [['merge_sort', [[8, 19, -2, 14.5]]], { value: [-2, 8, 14.5, 19] }],
      [['merge_sort', [[3]]], { value: [3] }],
      [['merge_sort', [[5, 1, 4, 1, 5, 9, 2, 6]]], { value: [1, 1, 2, 4, 5, 5, 6, 9] }],
      [['merge_sort', [[2, 1]]], { value: [1, 2] }],
      [
        [
          'merge',
          [
            [1, 4],
            [2, 3],
          ],
        ],
        { value: [1, 2, 3, 4] },
      ],
      [['merge', [[5], [1, 9]]], { value: [1, 5, 9] }],
      [['first_half', [[1, 2, 3, 4, 5]]], { value: [1, 2] }],
      [['last_half', [[1, 2, 3, 4, 5]]], { value: [3, 4, 5] }],
      [['first_half', [[]]], { value: [] }],
      [['last_half', [[7]]], { value: [7] }],
    ],
  },
];

/** The reference's outcome per graph and call: run live, or as recorded. */
const expected = new Map<string, Outcome[]>(
  GRAPHS.map(({ csv, calls }) => [csv, calls.map(([, outcome]) => outcome)]),
);

let scratch: string;

beforeAll(async () => {
  if (!live) return;
  scratch = await mkdtemp(join(tmpdir(), 'meta-agent-pyfn-'));
  for (const { csv, calls } of GRAPHS) {
    const callsPath = join(scratch, `${csv}.calls.json`);
    const outPath = join(scratch, `${csv}.out.json`);
    await writeFile(callsPath, JSON.stringify(calls.map(([call]) => call)));
    const run = spawnSync(python!, [CALL, reference, join(FIXTURES, csv), callsPath, outPath], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (run.status !== 0) throw new Error(`call.py failed on ${csv}: ${run.stderr}`);
    const outcomes = (JSON.parse(await readFile(outPath, 'utf8')) as (Outcome & { ms: number })[]).map(
      ({ ms: _ms, ...outcome }) => outcome,
    );
    expected.set(csv, outcomes);
  }
}, 180_000);

afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** What meta-agent's Interpreter.applyFn gives for the call, in the reference's terms. */
async function ours(agent: Interpreter, [fn, args]: Call): Promise<Outcome> {
  try {
    const { value } = await agent.applyFn(fn, args);
    return { value };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

const against = live
  ? 'compared with the reference run live'
  : 'compared with its recorded results: the reference is not here';

describe.each(GRAPHS)(`$csv: every call returns what AutoGRAMS returns (${against})`, ({ csv, calls }) => {
  it('through Interpreter.applyFn', async () => {
    const { models } = recordingModels({ rules: [] });
    const agent = await Interpreter.create({
      graph: csvGraph(readFileSync(join(FIXTURES, csv), 'utf8'), csv.replace('.csv', '')),
      models,
    });
    try {
      const got: Outcome[] = [];
      for (const [call] of calls) got.push(await ours(agent, call));
      expect(got).toEqual(expected.get(csv));
    } finally {
      agent.dispose();
    }
  }, 120_000);

  it('through the CLI: meta-agent call prints the last call’s result as JSON', async () => {
    const [[fn, args]] = calls[calls.length - 1]!;
    const text = `${fn}(${args.map((arg) => JSON.stringify(arg)).join(', ')})`;
    const result = await runCli(['call', join(FIXTURES, csv), text]);
    expect(result.stderr).not.toContain('error:');
    expect(result.code).toBe(0);
    const outcome = expected.get(csv)![calls.length - 1]!;
    expect(JSON.parse(result.stdout)).toEqual((outcome as { value: unknown }).value);
  }, 60_000);
});

describe('merge_sort_fn.csv: merge_sort([]), where AutoGRAMS recurses forever', () => {
  it('ends in an error at the call-depth limit instead of hanging', async () => {
    const { models } = recordingModels({ rules: [] });
    const csv = readFileSync(join(FIXTURES, 'merge_sort_fn.csv'), 'utf8');
    const agent = await Interpreter.create({ graph: csvGraph(csv, 'merge_sort_fn'), models });
    try {
      await expect(agent.applyFn('merge_sort', [[]])).rejects.toThrow(/nested more than \d+ deep/);
    } finally {
      agent.dispose();
    }
  }, 120_000);
});
