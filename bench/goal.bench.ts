/**
 * Goal-loop benchmark: what one step of `meta-agent run` costs beyond the model, in a run whose history
 * already holds 10, 100 and 1 000 steps. A step forms the prompt (the history window counted with
 * tiktoken), parses the answer, authorizes it (`--yes`), writes a small file in a real workspace, and
 * saves the run file three times (answered, running, done), each an append to its journal flushed to
 * the disk. The goals: a step stays a small part of any model call, ≤ 50 ms at every size, and neither
 * the step nor the prompt's forming grows with the run (within 2× of the 10-step figure).
 *
 * The model answers at once (`write_to_file` of a new file each step, so no loop is detected). Each
 * prefilled step's output is 2 000 characters, a typical read_file result. Sizes are timed in rounds,
 * a few steps of each size per round (interleaved, so the machine's drift hits all sizes alike), after
 * a round that warms up (loads the tokenizer, the file system's caches) and is not counted.
 *
 * Run: `npx tsc -p . && node --no-node-snapshot dist/bench/goal.bench.js`
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { GoalLoop } from '../src/autonomous/goal-loop.js';
import type { GoalRunStore } from '../src/autonomous/goal-run-store.js';
import { goalPrompt } from '../src/autonomous/prompt.js';
import { newRunState, type RunState } from '../src/autonomous/run-state.js';
import { EventBus } from '../src/events.js';
import { RunJournal } from '../src/store/run-journal.js';
import { TEXT_ONLY, type LanguageModel } from '../src/llm/types.js';
import { commandRegistry } from '../tools/index.js';
import { Workspace } from '../tools/workspace.js';
import { printTable, quantiles, verdict } from './stats.js';

/** The most a step may cost beyond the model, at any size. */
export const STEP_GOAL_MS = 50;

/** How much dearer a step, or the forming of its prompt, may be at any size than at the first. */
export const FLAT_WITHIN = 2;

export interface GoalBenchRow {
  historySteps: number;
  stepMs: { median: number; p95: number };
  /** Forming one step's prompt alone (history window, token counts). */
  promptMs: { median: number; p95: number };
  runFileKb: number;
  /** KiB written to the run file per step (its three saves), compactions included. */
  kbPerStep: number;
}

/** The rest of a goal-run store, which a run that exists already never calls. */
const unused: Omit<GoalRunStore, 'save'> = {
  create: () => Promise.reject(new Error('not used')),
  load: () => Promise.reject(new Error('not used')),
};

const THOUGHTS = {
  text: 'Next file.',
  reasoning: 'The plan.',
  plan: '- write',
  criticism: '',
  speak: 'Writing.',
};

/** A model that answers at once with a write of a file it has not written yet. */
function writingModel(): LanguageModel {
  let count = 0;
  const answer = () => {
    count += 1;
    const command = { name: 'write_to_file', args: { file: `out/${count}.txt`, text: `file ${count}` } };
    return {
      text: JSON.stringify({ thoughts: THOUGHTS, command }),
      usage: { promptTokens: 0, completionTokens: 0 },
      model: 'instant',
    };
  };
  return {
    id: 'bench:instant:writer',
    modelName: 'gpt-4o-mini',
    capabilities: TEXT_ONLY,
    answersFrom: 'rules',
    complete: () => Promise.resolve(answer()),
    stream: () => Promise.resolve(answer()),
    embed: () => Promise.reject(new Error('not used')),
  };
}

/** A run that has already taken `steps` steps, each a read of a 2 000-character file. */
function grownRun(steps: number, workspace: string): RunState {
  const state = newRunState({
    name: 'Bench',
    role: 'an AI that writes files',
    goals: ['write files'],
    workspace,
    budget: {},
  });
  const output = 'Some text read from a file in the workspace. '.repeat(45).slice(0, 2000);
  for (let step = 1; step <= steps; step++)
    state.history.push({
      kind: 'command',
      step,
      thoughts: THOUGHTS,
      command: { name: 'read_file', args: { file: `notes/${step}.md` } },
      ok: true,
      output,
      files: [{ path: `notes/${step}.md`, change: 'read' }],
    });
  state.used.steps = steps;
  return state;
}

export async function runGoalBench(
  options: { sizes?: number[]; rounds?: number; stepsPerRound?: number } = {},
): Promise<GoalBenchRow[]> {
  const sizes = options.sizes ?? [10, 100, 1_000];
  const rounds = options.rounds ?? 6;
  const stepsPerRound = options.stepsPerRound ?? 5;
  const dir = await mkdtemp(join(tmpdir(), 'meta-agent-goal-bench-'));
  try {
    const runs = await Promise.all(
      sizes.map(async (size) => {
        const workspace = await Workspace.open(join(dir, `ws${size}`));
        const state = grownRun(size, workspace.root);
        const path = join(dir, `run${size}.json`);
        const journal = new RunJournal(path);
        return { size, workspace, state, journal, samples: [] as number[], prompts: [] as number[] };
      }),
    );
    const registry = commandRegistry().offered({ workspace: runs[0]!.workspace });
    const bytesBefore = new Map<number, number>();
    for (let round = 0; round <= rounds; round++) {
      if (round === 1) for (const run of runs) bytesBefore.set(run.size, run.journal.bytesWritten);
      for (const run of runs) {
        run.state.budget.maxSteps = run.state.used.steps + stepsPerRound;
        const loop = new GoalLoop({
          state: run.state,
          chatbot: writingModel(),
          registry,
          resources: { workspace: run.workspace },
          resourceLines: ['File output in your workspace.'],
          permissions: { yes: true, allow: new Set() },
          // Saved as the file store saves a run (files.ts), less the consent's seal: no user key here.
          keptAt: {
            store: { ...unused, save: (_key, state) => run.journal.save(state) },
            key: run.journal.path,
          },
          events: new EventBus(),
        });
        const formed = performance.now();
        goalPrompt({
          state: run.state,
          registry,
          resources: ['File output in your workspace.'],
          budget: '',
          memories: [],
          tools: false,
          modelName: 'gpt-4o-mini',
          now: new Date(),
        });
        if (round > 0) run.prompts.push(performance.now() - formed);
        const started = performance.now();
        await loop.run();
        // The run's own first save and its end are one save each, spread over the steps.
        if (round > 0) run.samples.push((performance.now() - started) / stepsPerRound);
        delete run.state.ended;
      }
    }
    const rows: GoalBenchRow[] = [];
    for (const run of runs)
      rows.push({
        historySteps: run.size,
        stepMs: quantiles(run.samples),
        promptMs: quantiles(run.prompts),
        runFileKb: (await stat(run.journal.path)).size / 1024,
        kbPerStep: (run.journal.bytesWritten - bytesBefore.get(run.size)!) / 1024 / (rounds * stepsPerRound),
      });
    const [first] = rows;
    const flat = (value: number, base: number) => value <= FLAT_WITHIN * base;
    printTable(
      `goal loop: one step beyond the model (prompt, parse, authorize, write a file, 3 durable saves); goal ≤ ${STEP_GOAL_MS} ms, step and prompt ≤ ${FLAT_WITHIN}× the first size`,
      [
        'history',
        'step ms (median)',
        'p95',
        '÷ first',
        'prompt ms',
        '÷ first',
        'KiB/step',
        'run file',
        'goal',
      ],
      rows.map((row) => [
        `${row.historySteps} steps`,
        row.stepMs.median.toFixed(1),
        row.stepMs.p95.toFixed(1),
        `${(row.stepMs.median / first!.stepMs.median).toFixed(2)}×`,
        row.promptMs.median.toFixed(2),
        `${(row.promptMs.median / first!.promptMs.median).toFixed(2)}×`,
        row.kbPerStep.toFixed(1),
        `${row.runFileKb.toFixed(0)} KiB`,
        verdict(
          row.stepMs.p95 <= STEP_GOAL_MS &&
            flat(row.stepMs.median, first!.stepMs.median) &&
            flat(row.promptMs.median, first!.promptMs.median),
        ),
      ]),
    );
    return rows;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runGoalBench();
