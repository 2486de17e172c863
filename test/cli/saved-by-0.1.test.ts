import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { loadRunFile } from '../../src/store/run-journal.js';

// Files that release 0.1 wrote, before conversations, goal runs and flow runs were saved through the
// store: a user's files on disk must load and go on. Each was made by the 0.1 CLI itself: two chat
// journals (one of a self-editing agent, whose edits and versions live in the state), a goal run ended
// at its step limit, and a flow pass stopped with Ctrl+C after its first step.

const saved = new URL('../fixtures/saved-0.1/', import.meta.url).pathname;
const fixtures = new URL('../fixtures/cli/', import.meta.url).pathname;
const examples = new URL('../../examples/', import.meta.url).pathname;

describe('files saved by release 0.1', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'meta-agent-0.1-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a chat journal resumes where it stopped and saves the replies after it', async () => {
    const state = join(dir, 'quiz.state.jsonl');
    await cp(join(saved, 'quiz.state.jsonl'), state);
    const before = await readFile(state, 'utf8');
    const scripted = ['--provider', 'scripted', '--script', join(fixtures, 'quiz.script.json')];
    const result = await runCli(
      ['chat', join(fixtures, 'quiz.autogram.json'), '--state', state, '--no-tui', ...scripted],
      { input: 'ok\n4\n' },
    );
    expect(result.stderr).not.toMatch(/error/);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('What is 2 + 2?\nCorrect!\n');
    expect(await readFile(state, 'utf8')).not.toBe(before);
    const again = await runCli(
      ['chat', join(fixtures, 'quiz.autogram.json'), '--state', state, '--no-tui', ...scripted],
      { input: '4\n' },
    );
    expect(again.code).toBe(0);
    expect(again.stdout).toBe('What is 2 + 2?\n');
  });

  it("a self-editing agent's journal resumes on the nodes it wrote", async () => {
    // `history` reads a state by its .json name; the journal inside is 0.1's all the same.
    const state = join(dir, 'grower.state.json');
    await cp(join(saved, 'grower.state.jsonl'), state);
    const result = await runCli(
      ['chat', join(fixtures, 'grower.autogram.json'), '--state', state, '--no-tui'],
      { input: 'thanks\n' },
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('That is all.\n');
    const history = await runCli(['history', state]);
    expect(history.code).toBe(0);
    expect(history.stdout).toMatch(/add.*grown/);
  });

  it('a goal run resumes with a higher step limit and completes', async () => {
    const workspace = join(dir, 'ws');
    const runs = join(workspace, '.meta-agent', 'runs');
    await mkdir(runs, { recursive: true });
    await writeFile(join(workspace, 'haiku.txt'), 'Crisp leaves drift and spin\n');
    const run = join(runs, 'Poet-14ae6518a584.run.json');
    await cp(join(saved, 'poet.run.json'), run);
    // The rest of examples/haiku-run.script.json: the run had taken its first two steps.
    const script = JSON.parse(await readFile(join(examples, 'haiku-run.script.json'), 'utf8'));
    script.rules[0].reply = script.rules[0].reply.slice(2);
    await writeFile(join(dir, 'rest.script.json'), JSON.stringify(script));
    const result = await runCli(
      [
        'run',
        '--resume',
        run,
        '--workspace',
        workspace,
        '--max-steps',
        '4',
        '--provider',
        'scripted',
        '--script',
        join(dir, 'rest.script.json'),
      ],
      { cwd: dir },
    );
    expect(result.stderr).toContain('resuming a run that ended with max_steps');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('task_complete');
    const after = await loadRunFile(run);
    expect(after).toMatchObject({
      id: '14ae6518a584',
      used: { steps: 4 },
      ended: { reason: 'task_complete' },
    });
  });

  it('a flow pass stopped after its first step finishes from there', async () => {
    const state = join(dir, 'plan-task.run.json');
    await cp(join(saved, 'plan-task.run.json'), state);
    const result = await runCli([
      'flow',
      'run',
      join(examples, 'plan-task.flow.json'),
      '--state',
      state,
      '--no-tui',
      '--provider',
      'scripted',
      '--script',
      join(examples, 'plan-task.script.json'),
    ]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('pass 1 (resumed)');
    expect(result.stderr).not.toContain('requirements,');
    expect(result.stdout).toContain('1. Confirm the move date');
    const after = JSON.parse(await readFile(state, 'utf8'));
    expect(after.last.requirements.output).toBe('Finish within a month.');
    expect(after.current).toBeUndefined();
  });
});
