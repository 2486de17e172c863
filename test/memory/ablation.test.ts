/**
 * Does long-term memory carry a fact past the short-term history? A run reads a briefing at step 3,
 * then 35 long reports push it out of the prompt's history, and at step 39 a to-do note asks for the
 * briefing's code. The same scripted run, with and without memory: only with it does the prompt of
 * step 40 hold the code.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../memory/store.js';
import { Workspace } from '../../tools/workspace.js';
import { wordEmbedder } from '../support/embedders.js';
import { answer, testRun, type TestRun } from '../support/goal-loop.js';

const FACT = 'The launch code for the Orion release is PX-7719.';

const runs: TestRun[] = [];
afterEach(() => runs.splice(0).forEach((run) => run.dispose()));

/** A report of about 600 tokens that says nothing about launches or codes. */
function report(n: number): string {
  return Array.from(
    { length: 40 },
    (_, line) => `Report ${n}, line ${line}: the warehouse counted ${n * 40 + line} crates of apples today.`,
  ).join('\n');
}

async function runTo40(withMemory: boolean): Promise<{ prompt40: string; run: TestRun }> {
  const answers = [
    answer('write_to_file', { file: 'plan.txt', text: 'read everything' }),
    answer('list_files', { folder: '.' }),
    answer('read_file', { file: 'briefing.txt' }),
    ...Array.from({ length: 35 }, (_, i) => answer('read_file', { file: `reports/${i}.txt` })),
    answer('read_file', { file: 'todo.txt' }),
    answer('write_to_file', { file: 'answer.txt', text: 'whatever the prompt held' }),
  ];
  const files = await Workspace.open(await mkdtemp(join(tmpdir(), 'ablation-')));
  await files.write('briefing.txt', FACT);
  for (let i = 0; i < 35; i++) await files.write(`reports/${i}.txt`, report(i));
  await files.write('todo.txt', 'To do: write the launch code for the Orion release into answer.txt.');
  const memory = withMemory
    ? await MemoryStore.open({
        folder: join(await mkdtemp(join(tmpdir(), 'ablation-memory-')), 'agent'),
        embedder: wordEmbedder(),
      })
    : undefined;
  const run = await testRun({
    answers,
    budget: { maxSteps: 40 },
    workspace: files,
    ...(memory && { resources: { memory } }),
  });
  runs.push(run);
  const ended = await run.loop.run();
  expect(ended.used.steps).toBe(40);
  return { prompt40: run.prompts()[39]!, run };
}

describe('long-term memory in a 40-step run (ablation)', () => {
  it('brings back at step 40 the fact read at step 3, which short-term history had dropped', async () => {
    const without = await runTo40(false);
    expect(without.prompt40).toContain('To do: write the launch code');
    expect(without.prompt40).not.toContain('PX-7719');
    expect(without.run.prompts()[3]).toContain('PX-7719');

    const withMemory = await runTo40(true);
    expect(withMemory.prompt40).toContain('This reminds you of these events from your past');
    expect(withMemory.prompt40).toContain('PX-7719');
    // Not because the history kept it: the memories section did.
    const fromMemories = withMemory.prompt40.split('This reminds you of these events from your past')[1]!;
    expect(fromMemories.split('PX-7719')).toHaveLength(2);
  });
});
