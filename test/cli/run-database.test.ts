/**
 * `meta-agent run --database`: the run kept in PostgreSQL and carried as a durable workflow by the CLI
 * itself; in a pipe, a command that needs an answer waits for `meta-agent approve` from another process.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DBOSClient } from '@dbos-inc/dbos-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { goalRunId } from '../../src/cli/goal-run-workflow.js';
import { openDatabase, type Database } from '../../src/postgres/database.js';
import { postgresStore } from '../../src/store/postgres.js';
import type { OpenAIServer } from '../support/openai-server.js';
import { freshDatabase } from '../support/postgres.js';
import { startReplayServer } from '../support/replay-server.js';
import { runCli, spawnCli, type CliResult } from '../support/run-cli.js';
import { TS_CHILD_ARGS } from '../support/ts-child.js';

const WORKER = fileURLToPath(new URL('../support/goal-worker.ts', import.meta.url));

let url: string;
let db: Database;
let server: OpenAIServer;

beforeAll(async () => {
  url = await freshDatabase();
  db = await openDatabase(url);
  server = await startReplayServer(
    [
      { name: 'append_to_file', args: { file: 'log.txt', text: 'one\n' } },
      { name: 'append_to_file', args: { file: 'log.txt', text: 'two\n' } },
      { name: 'append_to_file', args: { file: 'log.txt', text: 'three\n' } },
      { name: 'task_complete', args: { reason: 'the lines are written' } },
    ],
    'json',
  );
});

afterAll(async () => {
  await db?.close();
  await server?.close();
});

const env = () => ({ META_AGENT_DATABASE_URL: url });

function runArgs(workspace: string, ...more: string[]): string[] {
  return [
    'run',
    '--goal',
    'write lines to log.txt',
    '--workspace',
    workspace,
    '--no-memory',
    '--base-url',
    server.url,
    '--model',
    'gpt-4o-mini',
    ...more,
  ];
}

/** Starts a run in a pipe; resolves with its id once it says so, and with how it ended. */
function startRun(workspace: string): { id: Promise<string>; done: Promise<CliResult> } {
  const child = spawnCli(runArgs(workspace), { env: env() });
  let stdout = '';
  let stderr = '';
  let found: (id: string) => void;
  const id = new Promise<string>((resolve) => (found = resolve));
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    const match = /meta-agent approve ([0-9a-f]+)/.exec(stderr);
    if (match) found(match[1]!);
  });
  child.stdin.end();
  const done = new Promise<CliResult>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
  return { id, done };
}

/** Answers run `id` once it waits (approve exits 1 while it does not). */
async function approve(id: string, ...answer: string[]): Promise<CliResult> {
  for (;;) {
    const result = await runCli(['approve', id, ...answer], { env: env() });
    if (result.code !== 1) return result;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('run --database', () => {
  it('keeps the run in the database, and carries it to its end in the terminal', async () => {
    const workspace = await mkdtemp(join(tmpdir(), 'run-db-'));
    const result = await runCli(runArgs(workspace, '--yes'), { env: env() });
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('task_complete');
    expect(await readFile(join(workspace, 'log.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
    const id = /as run ([0-9a-f]+)/.exec(result.stderr)![1]!;
    const state = await postgresStore(db, { claimant: 'test' }).goalRuns.load(id);
    expect(state.ended).toEqual({ reason: 'task_complete', detail: 'the lines are written' });
    expect(state.history.filter((entry) => entry.kind === 'command')).toHaveLength(4);
  });

  it('waits for meta-agent approve in a pipe: y runs the command, feedback goes to the model, n stops', async () => {
    const workspace = await mkdtemp(join(tmpdir(), 'run-db-'));
    const run = startRun(workspace);
    const id = await run.id;
    const yes = await approve(id, 'y');
    expect(yes).toMatchObject({ code: 0, stdout: `answered step 1 of run ${id}: y\n` });
    expect((await approve(id, 'not', 'now,', 'write', 'three')).stdout).toBe(
      `answered step 2 of run ${id}: not now, write three\n`,
    );
    expect((await approve(id, 'n')).code).toBe(0);
    const ended = await run.done;
    expect(ended.code).toBe(0);
    expect(ended.stdout).toContain('user');
    expect(await readFile(join(workspace, 'log.txt'), 'utf8')).toBe('one\n');
    const state = await postgresStore(db, { claimant: 'test' }).goalRuns.load(id);
    expect(state.history[1]).toMatchObject({
      kind: 'refused',
      message: 'The user did not run append_to_file and says: not now, write three',
    });
  });

  it('hands the run to a worker with --queue, printing its id for approve', async () => {
    const worker = spawn(process.execPath, [...TS_CHILD_ARGS, WORKER, url], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      await new Promise<void>((resolve) =>
        worker.stdout.setEncoding('utf8').on('data', (chunk: string) => chunk.includes('ready') && resolve()),
      );
      const workspace = await mkdtemp(join(tmpdir(), 'run-db-'));
      const queued = await runCli(runArgs(workspace, '--queue'), { env: env() });
      expect(queued.code).toBe(0);
      const id = queued.stdout.trim();
      expect(queued.stderr).toContain(`meta-agent approve ${id}`);
      for (let step = 1; step <= 3; step++)
        expect((await approve(id, 'y')).stdout).toBe(`answered step ${step} of run ${id}: y\n`);
      const client = await DBOSClient.create({ systemDatabaseUrl: url });
      try {
        expect(await client.retrieveWorkflow(goalRunId(id)).getResult()).toEqual({
          reason: 'task_complete',
          detail: 'the lines are written',
        });
      } finally {
        await client.destroy();
      }
      expect(await readFile(join(workspace, 'log.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
    } finally {
      worker.kill('SIGKILL');
    }
  });

  it('says in one line that a run does not exist (exit 2)', async () => {
    const result = await runCli(['approve', '0123456789ab', 'y'], { env: env() });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')[0]).toMatch(/there is no run 0123456789ab/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
