/**
 * Goal runs over HTTP on a server that keeps its work in PostgreSQL (DBOS launched): a command the
 * server's flags do not allow waits on a DBOS message, which the answer route sends (as any server of
 * the database could), and `meta-agent approve` too, from another process.
 */
import { readFile } from 'node:fs/promises';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelsFromOptions } from '../../src/cli/model-options.js';
import { launchDurable, type Durable } from '../../src/durable/runtime.js';
import { openDatabase, type Database } from '../../src/postgres/database.js';
import type { RunView } from '../../src/serve/goal-runs.js';
import { startServer, type RunningServer } from '../../src/serve/server.js';
import { postgresStore } from '../../src/store/postgres.js';
import type { OpenAIServer } from '../support/openai-server.js';
import { freshDatabase } from '../support/postgres.js';
import { startReplayServer } from '../support/replay-server.js';
import { runCli } from '../support/run-cli.js';

let url: string;
let db: Database;
let durable: Durable;
let model: OpenAIServer;
let server: RunningServer;
let workspace: string;

beforeAll(async () => {
  url = await freshDatabase();
  db = await openDatabase(url);
  durable = await launchDurable({ db, url, role: 'serve', version: 'test' });
  model = await startReplayServer(
    [
      { name: 'append_to_file', args: { file: 'log.txt', text: 'one\n' } },
      { name: 'append_to_file', args: { file: 'log.txt', text: 'two\n' } },
      { name: 'append_to_file', args: { file: 'log.txt', text: 'three\n' } },
      { name: 'task_complete', args: { reason: 'the lines are written' } },
    ],
    'json',
  );
  workspace = await mkdtemp(join(tmpdir(), 'serve-pg-runs-'));
  server = await startServer({
    served: [],
    store: postgresStore(db, { claimant: durable.executorId }),
    conversationKey: (id) => id,
    flowRunKey: (id) => id,
    goalLoop: { workspace },
    models: (await modelsFromOptions({ baseUrl: model.url, model: 'gpt-4o-mini' })).models,
    durable: true,
    limits: { maxBodyBytes: 1_000_000, deadlineMs: 30_000, maxWaiting: 8, idleMs: 60_000 },
    host: '127.0.0.1',
    port: 0,
    loopback: true,
    onProblem: () => {},
  });
});

afterAll(async () => {
  await server?.shutdown(5_000);
  await durable?.shutdown();
  await db?.close();
  await model?.close();
});

async function call(
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${server.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

/** The run's view once `done` says it is there. */
async function until(id: string, done: (view: RunView) => boolean): Promise<RunView> {
  for (;;) {
    const view = (await call(`/v1/runs/${id}`)).json as unknown as RunView;
    if (done(view)) return view;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('goal runs over HTTP on PostgreSQL', () => {
  it('answers through DBOS messages: the answer route, then meta-agent approve from another process', async () => {
    const started = await call('/v1/runs', { goals: ['write the lines to log.txt'] });
    expect(started.status).toBe(201);
    const id = started.json.id as string;
    const asked = await until(id, (view) => view.awaiting?.step === 1);
    expect(asked).toMatchObject({ status: 'awaiting', awaiting: { name: 'append_to_file' } });

    expect((await call(`/v1/runs/${id}/answer`, { answer: 'y' })).status).toBe(200);
    await until(id, (view) => view.awaiting?.step === 2);
    const approved = await runCli(['approve', id, 'y'], { env: { META_AGENT_DATABASE_URL: url } });
    expect(approved).toMatchObject({ code: 0, stdout: `answered step 2 of run ${id}: y\n` });
    await until(id, (view) => view.awaiting?.step === 3);
    expect((await call(`/v1/runs/${id}/answer`, { answer: 'n' })).status).toBe(200);

    const ended = await until(id, (view) => view.status === 'ended');
    expect(ended.ended).toEqual({ reason: 'user', detail: 'the user answered n to append_to_file' });
    expect(await readFile(join(workspace, 'local', 'log.txt'), 'utf8')).toBe('one\ntwo\n');
    const again = await call(`/v1/runs/${id}/answer`, { answer: 'y' });
    expect(again).toMatchObject({ status: 409, json: { error: { code: 'run_not_awaiting' } } });
  });
});
