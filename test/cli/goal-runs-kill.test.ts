/**
 * 50 goal runs × 10 steps on two worker processes and one PostgreSQL, one worker killed with kill -9
 * while runs are in flight: the other takes its runs over (the reaper puts them back on the queue), no
 * side effect runs twice (each step appends its own line to its run's file: no line twice), and every
 * run ends for a stated reason.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DBOSClient, type WorkflowStatus } from '@dbos-inc/dbos-sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { newRunState } from '../../src/autonomous/run-state.js';
import { enqueueGoalRun, goalRunId } from '../../src/cli/goal-run-workflow.js';
import { version } from '../../src/cli/version.js';
import { openDatabase } from '../../src/postgres/database.js';
import { postgresStore } from '../../src/store/postgres.js';
import { freshDatabase } from '../support/postgres.js';
import { startReplayServer, type ReplayStep } from '../support/replay-server.js';
import { TS_CHILD_ARGS } from '../support/ts-child.js';

const RUNS = 50;
const STEPS = 10;
const worker = fileURLToPath(new URL('../support/goal-worker.ts', import.meta.url));
const children: ChildProcess[] = [];

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

/** A worker process on `url`, once it takes work. */
async function startWorker(url: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...TS_CHILD_ARGS, worker, url], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => chunk.includes('ready') && resolve());
    child.once('exit', () => reject(new Error(`the worker stopped: ${stderr}`)));
  });
  return child;
}

/** Each step appends its own line; the last completes the run. */
const steps: ReplayStep[] = Array.from({ length: STEPS }, (_, i) =>
  i < STEPS - 1
    ? { name: 'append_to_file', args: { file: 'log.txt', text: `step ${i + 1}\n` } }
    : { name: 'task_complete', args: { reason: 'every line is written' } },
);

async function linesOf(workspace: string): Promise<string[]> {
  const text = await readFile(join(workspace, 'log.txt'), 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean);
}

describe('goal runs on two workers, one killed', () => {
  it('runs no side effect twice, and ends every run for a stated reason', { timeout: 180_000 }, async () => {
    const url = await freshDatabase();
    const db = await openDatabase(url);
    const store = postgresStore(db, { claimant: 'test' });
    const server = await startReplayServer(steps, 'json', { latencyMs: 40 });
    const client = await DBOSClient.create({ systemDatabaseUrl: url });
    try {
      const [doomed] = [await startWorker(url), await startWorker(url)];
      const runs: Array<{ id: string; workspace: string }> = [];
      for (let n = 0; n < RUNS; n++) {
        const workspace = await mkdtemp(join(tmpdir(), 'goal-kill-'));
        const state = newRunState({
          name: 'Writer',
          role: 'writes lines',
          goals: ['write the lines'],
          workspace,
          budget: { maxSteps: 30 },
        });
        const key = await store.goalRuns.create(state, ['Writer']);
        await store.goalRuns.save(key, state);
        await enqueueGoalRun(
          client,
          { key, models: { baseUrl: server.url, model: 'gpt-4o-mini' }, grants: { yes: true } },
          goalRunId(state.id),
          version(),
        );
        runs.push({ id: state.id, workspace });
      }
      // Kill one worker once a fifth of the lines are written, while runs are in flight.
      for (;;) {
        const written = (await Promise.all(runs.map((run) => linesOf(run.workspace)))).flat().length;
        if (written >= (RUNS * (STEPS - 1)) / 5) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      doomed!.kill('SIGKILL');
      const dead = (workflow: WorkflowStatus) => workflow.executorId?.split(':')[1] === String(doomed!.pid);
      const inFlight = (
        await client.listWorkflows({ workflowName: 'goal.run', status: 'PENDING', loadInput: false })
      ).filter(dead);
      expect(inFlight.length).toBeGreaterThan(0);

      const ends = await Promise.all(
        runs.map((run) => client.retrieveWorkflow(goalRunId(run.id)).getResult()),
      );
      for (const [n, run] of runs.entries()) {
        const lines = await linesOf(run.workspace);
        expect(new Set(lines).size, `run ${run.id} wrote a line twice: ${lines.join(', ')}`).toBe(
          lines.length,
        );
        const state = await store.goalRuns.load(run.id);
        expect(state.ended).toBeDefined();
        expect(ends[n]).toEqual(state.ended);
        expect(state.ended!.reason).toBe('task_complete');
        for (let step = 1; step < STEPS; step++) {
          const entry = state.history.find((item) => 'step' in item && item.step === step);
          // A line is written by a step that ran, or by one that was running when its worker died.
          if (entry?.kind === 'command') expect(lines).toContain(`step ${step}`);
          else expect(entry?.kind).toBe('interrupted');
        }
      }
      // The runs the killed worker had in flight were carried to their end by the other.
      for (const { workflowID } of inFlight) {
        const status = (await client.getWorkflow(workflowID))!;
        expect(status.status).toBe('SUCCESS');
        expect(dead(status)).toBe(false);
      }
    } finally {
      await client.destroy();
      await server.close();
      await db.close();
    }
  });
});
