/**
 * Graph and state files are untrusted input. Hundreds of mutants of the shipped graphs (bytes flipped,
 * cut, repeated; values swapped for other types, huge or prototype-named ones) go through everything a
 * shared file meets: loading, lint, every text export, a short scripted conversation, and the state
 * reader; mutants of a goal-loop run file go through `run --resume`'s reader and the prompt built from
 * what it read; mutants of a flow file and of a flow's saved pass are loaded, linted, exported and run.
 * Each must work or fail with a UserError, the kind the CLI prints as one line; anything else
 * would reach the user as "this looks like a bug". A sample also goes through the real CLI.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { budgetLine } from '../../src/autonomous/budget.js';
import { goalPrompt } from '../../src/autonomous/prompt.js';
import { loadRunFile } from '../../src/store/run-journal.js';
import { loadStateFile } from '../../src/store/conversation-journal.js';
import { Interpreter } from '../../src/engine/interpreter.js';
import { seededRandom } from '../../src/engine/simulate.js';
import { saveState } from '../../src/engine/state.js';
import { stateDelta } from '../../src/store/state-delta.js';
import { isUserError } from '../../src/errors.js';
import { EventBus } from '../../src/events.js';
import { exportFlow } from '../../src/export/flow-formats.js';
import { lintFlow } from '../../src/flow/lint.js';
import { loadFlowFile, parseFlowObject } from '../../src/flow/load.js';
import type { FlowRunStore } from '../../src/flow/flow-run-store.js';
import { loadFlowRun, newFlowRunState } from '../../src/flow/run-state.js';
import { runFlowPass } from '../../src/flow/runner.js';
import type { FlowFile } from '../../src/flow/schema.js';
import { Script, ScriptedModel, type ScriptFile } from '../../src/llm/scripted.js';
import { exportGraph } from '../../src/export/formats.js';
import { graphFromCsv } from '../../src/graph/csv.js';
import { lintGraph } from '../../src/aipl/lint.js';
import { parseGraphJson } from '../../src/graph/load.js';
import type { GraphFile } from '../../src/graph/schema.js';
import { StaticGraph } from '../../src/graph/view.js';
import { converse, noModels, noScript } from '../support/agents.js';
import { answer, testRun } from '../support/goal-loop.js';
import { runCli } from '../support/run-cli.js';
import { commandRegistry } from '../../tools/index.js';

const SOURCES = [
  'test/fixtures/cli/greeter.autogram.json',
  'test/fixtures/cli/quiz.autogram.json',
  'test/fixtures/engine/fibonacci.autogram.json',
  'test/fixtures/engine/scopes.autogram.json',
  'meta/self-improving.autogram.json',
  'test/fixtures/graphs/documented_tutor.csv',
  'test/fixtures/graphs/fraction_agent.csv',
  'test/fixtures/graphs/simple_example.csv',
  'examples/salesperson.autogram.json',
].map((path) => ({ path, text: readFileSync(path, 'utf8') }));

const MUTANTS_PER_SOURCE = 30;

const ODD_VALUES: unknown[] = [
  null,
  -1,
  1e308,
  0.5,
  '',
  'quit',
  '$x',
  'a.*',
  'f(a, b',
  '\u0000\u001b[2J',
  'x'.repeat(100_000),
  [],
  [null],
  {},
  { __proto__: null, constructor: 1 },
  JSON.parse('{"__proto__": {"polluted": true}}'),
  true,
  Array.from({ length: 200 }, (_, i) => `n${i}`),
];

/** One mutant of `text`: a structural change to its JSON when it has some, else a change to its bytes. */
function mutate(text: string, next: () => number): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const at = () => Math.floor(next() * text.length);
  if (text.trimStart().startsWith('{') && next() < 0.6) {
    const json = JSON.parse(text) as unknown;
    const paths: (string | number)[][] = [];
    const walk = (value: unknown, path: (string | number)[]) => {
      paths.push(path);
      if (value && typeof value === 'object')
        for (const [key, child] of Object.entries(value))
          walk(child, [...path, Array.isArray(value) ? Number(key) : key]);
    };
    walk(json, []);
    const path = pick(paths.slice(1));
    let parent = json as Record<string | number, unknown>;
    for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
    const key = path.at(-1)!;
    const action = next();
    if (action < 0.7) parent[key] = pick(ODD_VALUES);
    else if (action < 0.85) delete parent[key];
    else parent[key] = { nested: parent[key], [pick(['constructor', 'toString', '__proto__'])]: 1 };
    return JSON.stringify(json);
  }
  const action = next();
  const from = at();
  if (action < 0.25) return text.slice(0, from);
  if (action < 0.5) return text.slice(0, from) + text.slice(from + 1 + Math.floor(next() * 40));
  if (action < 0.7)
    return (
      text.slice(0, from) +
      pick(['{', '}', '"', ',', '\\', '\u0000', '\uFEFF', '\n', '$', '(']) +
      text.slice(from)
    );
  if (action < 0.85) {
    const piece = text.slice(from, from + 1 + Math.floor(next() * 200));
    return text.slice(0, from) + piece.repeat(1 + Math.floor(next() * 5)) + text.slice(from);
  }
  const bytes = Buffer.from(text);
  bytes[Math.floor(next() * bytes.length)]! ^= 1 << Math.floor(next() * 8);
  return bytes.toString('utf8');
}

function mutants(): { name: string; path: string; text: string }[] {
  const next = seededRandom(16);
  return SOURCES.flatMap(({ path, text }) =>
    Array.from({ length: MUTANTS_PER_SOURCE }, (_, i) => ({
      name: `${path.split('/').at(-1)} #${i}`,
      path,
      text: mutate(text, next),
    })),
  );
}

/** Runs `work`; a failure must be a UserError. Returns the failure's message, or undefined. */
async function userFacing(work: () => unknown): Promise<string | undefined> {
  try {
    await work();
    return undefined;
  } catch (error) {
    if (!isUserError(error)) throw error;
    return error.message;
  }
}

function load(path: string, text: string): GraphFile {
  return path.endsWith('.csv')
    ? graphFromCsv(text, { name: 'mutant', source: path }).file
    : parseGraphJson(text, path).file;
}

describe('mutated graph files', () => {
  const all = mutants();

  it(`load, lint, export and talk, or fail as a user error (${all.length} mutants)`, async () => {
    let loaded = 0;
    for (const mutant of all) {
      const failure = await userFacing(async () => {
        const file = load(mutant.path, mutant.text);
        lintGraph(file);
        for (const format of ['json', 'csv', 'mermaid', 'dot'] as const) await exportGraph(file, format);
        loaded += 1;
        if (lintGraph(file).some((finding) => finding.severity === 'error')) return;
        const agent = await Interpreter.create({
          graph: new StaticGraph(file),
          models: noModels,
          limits: { maxSteps: 200 },
        });
        try {
          const { state } = await agent.reply(undefined);
          saveState(state);
        } finally {
          agent.dispose();
        }
      }).catch((error: unknown) => {
        throw new Error(`${mutant.name} failed with a non-user error: ${String(error)}`, { cause: error });
      });
      expect(failure ?? '').not.toMatch(/\n\s+at /);
    }
    // Enough mutants stay loadable for the later stages to be exercised at all.
    expect(loaded).toBeGreaterThan(all.length / 4);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  }, 120_000);

  it('through the CLI, end in one clear line and never in "looks like a bug"', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'meta-agent-mutants-'));
    try {
      const sample = all.filter((_, i) => i % 20 === 0);
      for (const [i, mutant] of sample.entries()) {
        const path = join(dir, `mutant${i}${mutant.path.endsWith('.csv') ? '.csv' : '.autogram.json'}`);
        await writeFile(path, mutant.text);
        for (const args of [
          ['validate', path],
          ['show', path],
          ['export', path, '-f', 'mermaid'],
        ]) {
          const result = await runCli(args);
          expect(result.stderr, `${args.join(' ')} (${mutant.name})`).not.toMatch(
            /looks like a bug|\n\s+at /,
          );
          expect([0, 1, 2]).toContain(result.code);
        }
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('mutated state files', () => {
  it('resume or fail as a user error', async () => {
    const graph = new StaticGraph(load(SOURCES[0]!.path, SOURCES[0]!.text));
    const { state } = await converse(graph, noScript, [undefined]).catch(async () => ({
      state: (await Interpreter.create({ graph, models: noModels })).newState(),
    }));
    const text = saveState(state);
    const dir = await mkdtemp(join(tmpdir(), 'meta-agent-state-mutants-'));
    const next = seededRandom(7);
    try {
      for (let i = 0; i < 120; i++) {
        const path = join(dir, `state${i}.json`);
        await writeFile(path, mutate(text, next));
        await userFacing(() => loadStateFile(path)).catch((error: unknown) => {
          throw new Error(`state mutant ${i} failed with a non-user error: ${String(error)}`, {
            cause: error,
          });
        });
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('mutated AIPL conversation states', () => {
  it('resume, whole or journaled, or fail as a user error', async () => {
    const path = 'examples/salesperson.autogram.json';
    const graph = new StaticGraph(load(path, readFileSync(path, 'utf8')));
    const script = JSON.parse(readFileSync('examples/salesperson.script.json', 'utf8')) as ScriptFile;
    const said = [
      "Hi, I'm Dana. Honestly it's been a long, stressful day.",
      'Go Bears! My power bill is too high.',
    ];
    const before = (await converse(graph, script, [undefined, said[0]])).state;
    const after = (await converse(graph, script, [undefined, ...said])).state;
    expect(after.aipl?.log.length).toBeGreaterThan(2);
    const delta = JSON.stringify(stateDelta(before, after));
    const dir = await mkdtemp(join(tmpdir(), 'meta-agent-aipl-state-mutants-'));
    const next = seededRandom(11);
    try {
      for (let i = 0; i < 120; i++) {
        const file = join(dir, `state${i}.json`);
        const mutant =
          i % 2 ? `${JSON.stringify(before)}\n${mutate(delta, next)}\n` : mutate(saveState(after), next);
        await writeFile(file, mutant);
        await userFacing(() => loadStateFile(file)).catch((error: unknown) => {
          throw new Error(`AIPL state mutant ${i} failed with a non-user error: ${String(error)}`, {
            cause: error,
          });
        });
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('mutated run files', () => {
  it('resume or fail as a user error, and what loads makes a prompt', async () => {
    const run = await testRun({
      answers: [
        answer('write_to_file', { file: 'a.txt', text: 'one' }),
        'not an answer',
        answer('read_file', { file: 'a.txt' }),
        answer('task_complete', { reason: 'done' }),
      ],
    });
    await run.loop.run();
    run.dispose();
    const text = JSON.stringify(run.state, null, 1);
    const registry = commandRegistry();
    const dir = await mkdtemp(join(tmpdir(), 'meta-agent-run-mutants-'));
    const next = seededRandom(11);
    try {
      for (let i = 0; i < 120; i++) {
        const path = join(dir, `run${i}.json`);
        await writeFile(path, mutate(text, next));
        await userFacing(async () => {
          const state = await loadRunFile(path);
          goalPrompt({
            state,
            registry,
            resources: [],
            budget: budgetLine(state, 0),
            memories: [],
            tools: false,
            modelName: 'gpt-4o-mini',
            now: new Date(0),
          });
        }).catch((error: unknown) => {
          throw new Error(`run mutant ${i} failed with a non-user error: ${String(error)}`, { cause: error });
        });
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('mutated flow files and flow run files', () => {
  const flowPath = 'examples/plan-task.flow.json';
  const flowText = readFileSync(flowPath, 'utf8');
  const answers = readFileSync('examples/plan-task.script.json', 'utf8');
  const dir = () => mkdtemp(join(tmpdir(), 'meta-agent-flow-mutants-'));

  /** A pass of `flow` with the example's scripted answers, in concurrent steps, saved as it goes. */
  async function pass(flow: FlowFile, state = newFlowRunState(flow), store?: FlowRunStore) {
    const script = new Script(JSON.parse(answers) as ScriptFile, 'plan-task.script.json');
    return runFlowPass({
      flow,
      state,
      model: new ScriptedModel(script, 'chatbot'),
      events: new EventBus(),
      ...(store && { keptAt: { store, key: 'run' } }),
    });
  }

  it('load, lint, export and run, or fail as a user error', async () => {
    const next = seededRandom(23);
    const folder = await dir();
    try {
      for (let i = 0; i < 80; i++) {
        const path = join(folder, `m${i}.flow.json`);
        await writeFile(path, mutate(flowText, next));
        await userFacing(async () => {
          const flow = await loadFlowFile(path);
          const findings = lintFlow(flow);
          for (const format of ['dot', 'mermaid', 'json'] as const) await exportFlow(flow, format);
          if (!findings.some((f) => f.severity === 'error')) await pass(flow);
        }).catch((error: unknown) => {
          throw new Error(`flow mutant ${i} failed with a non-user error: ${String(error)}`, {
            cause: error,
          });
        });
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('resume a saved pass or fail as a user error', async () => {
    const flow = parseFlowObject(JSON.parse(flowText), flowPath);
    const saves: string[] = [];
    await pass(flow, undefined, {
      load: async () => undefined,
      save: async (_key, state) => {
        saves.push(JSON.stringify(state, null, 1));
      },
    });
    // Saved midway: some steps done, the gate's temporary node and edge recorded.
    const text = saves.find((save) => save.includes('"add-node"'))!;
    const next = seededRandom(29);
    const folder = await dir();
    try {
      for (let i = 0; i < 80; i++) {
        const path = join(folder, `run${i}.json`);
        await writeFile(path, mutate(text, next));
        await userFacing(async () => {
          const state = await loadFlowRun(path, flow);
          if (state) await pass(flow, state);
        }).catch((error: unknown) => {
          throw new Error(`flow run mutant ${i} failed with a non-user error: ${String(error)}`, {
            cause: error,
          });
        });
      }
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
