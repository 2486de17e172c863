/**
 * A goal run as a durable workflow in this process: it runs from the store, its questions are DBOS
 * messages that any process may send (answerQuestion, as `meta-agent approve` and a server do), and a
 * run whose process died in the middle of a command is carried on without running it again.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunState, type RunState } from '../../src/autonomous/run-state.js';
import { goalRunId, hostGoalRuns, startGoalRun, type GoalRunInput } from '../../src/cli/goal-run-workflow.js';
import { answerQuestion, questionId } from '../../src/durable/approvals.js';
import { launchDurable, type Durable } from '../../src/durable/runtime.js';
import { openDatabase, type Database } from '../../src/postgres/database.js';
import { inMemoryStore } from '../../src/store/in-memory.js';
import type { OpenAIServer } from '../support/openai-server.js';
import { freshDatabase } from '../support/postgres.js';
import { startReplayServer } from '../support/replay-server.js';

const store = inMemoryStore();
let db: Database;
let durable: Durable;
let server: OpenAIServer;

beforeAll(async () => {
  const url = await freshDatabase();
  db = await openDatabase(url);
  hostGoalRuns({ store, onProblem: () => {} });
  durable = await launchDurable({ db, url, role: 'test', version: 'test' });
  server = await startReplayServer(
    [
      { name: 'append_to_file', args: { file: 'log.txt', text: 'one\n' } },
      { name: 'append_to_file', args: { file: 'log.txt', text: 'two\n' } },
      { name: 'task_complete', args: { reason: 'both lines written' } },
    ],
    'json',
  );
});

afterAll(async () => {
  await durable?.shutdown();
  await db?.close();
  await server?.close();
});

async function newRun(): Promise<{ state: RunState; input: GoalRunInput }> {
  const workspace = await mkdtemp(join(tmpdir(), 'goal-workflow-'));
  const state = newRunState({
    name: 'Writer',
    role: 'writes',
    goals: ['write two lines'],
    workspace,
    budget: {},
  });
  const key = await store.goalRuns.create(state, ['Writer']);
  await store.goalRuns.save(key, state);
  return {
    state,
    input: { key, models: { baseUrl: server.url, model: 'gpt-4o-mini' }, grants: {} },
  };
}

/**
 * Waits until run `id` asks, answers `text` as another process would, and waits until the question
 * took it (a question is open until then, and a second answer would go to it).
 */
async function answerWhenAsked(id: string, text: string): Promise<number> {
  for (;;) {
    const outcome = await answerQuestion(DBOS, id, text);
    if (outcome.kind === 'sent') {
      await DBOS.retrieveWorkflow(questionId(id, outcome.step)).getResult();
      return outcome.step;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('a durable goal run', () => {
  it('asks through messages, and goes on with each answer', async () => {
    const { state, input } = await newRun();
    const handle = await startGoalRun(input, goalRunId(state.id), false);
    expect(await answerWhenAsked(state.id, 'y')).toBe(1);
    expect(await answerWhenAsked(state.id, 'y')).toBe(2);
    expect(await handle.getResult()).toEqual({ reason: 'task_complete', detail: 'both lines written' });
    expect(await readFile(join(state.workspace, 'log.txt'), 'utf8')).toBe('one\ntwo\n');
    expect(await answerQuestion(DBOS, state.id, 'y')).toEqual({ kind: 'not-waiting' });
    expect(await answerQuestion(DBOS, 'f00dfeed', 'y')).toEqual({ kind: 'unknown' });
  });

  it('tells the model what the user said instead, and stops at n', async () => {
    const { state, input } = await newRun();
    const handle = await startGoalRun(input, goalRunId(state.id), false);
    await answerWhenAsked(state.id, 'write three lines instead');
    await answerWhenAsked(state.id, 'n');
    expect(await handle.getResult()).toEqual({
      reason: 'user',
      detail: 'the user answered n to append_to_file',
    });
    const saved = await store.goalRuns.load(input.key);
    expect(saved.history[0]).toMatchObject({
      kind: 'refused',
      message: 'The user did not run append_to_file and says: write three lines instead',
    });
  });

  it('does not run again a command that was running when its process died', async () => {
    const { state, input } = await newRun();
    // The process that carried it saved step 1 as running, and died.
    state.used.steps = 1;
    state.pending = {
      step: 1,
      thoughts: { text: '', reasoning: '', plan: '', criticism: '', speak: '' },
      command: { name: 'append_to_file', args: { file: 'log.txt', text: 'one\n' } },
      phase: 'running',
      by: 'yes',
    };
    await store.goalRuns.save(input.key, state);
    const handle = await startGoalRun({ ...input, grants: { yes: true } }, goalRunId(state.id), false);
    expect((await handle.getResult()).reason).toBe('task_complete');
    expect(await readFile(join(state.workspace, 'log.txt'), 'utf8')).toBe('two\n');
    expect((await store.goalRuns.load(input.key)).history[0]).toMatchObject({ kind: 'interrupted', step: 1 });
  });
});
