/**
 * Goal runs over HTTP, end to end: the built CLI's `meta-agent serve` with a scripted model, a client
 * starting runs with fetch, following their events as SSE and answering the commands they wait on.
 * A command the server's flags do not allow waits for its owner's answer and runs only when answered
 * yes; a key never sees another key's runs or files.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunView } from '../../src/serve/goal-runs.js';
import { keyDigest } from '../../src/serve/keys.js';
import { startServe, type ServeProcess } from '../support/serve.js';
import { readToEnd, readUntil, streamedEvents, type StreamedEvent } from '../support/sse-client.js';
import { loadRunFile } from '../../src/store/run-journal.js';

const GRAPH = 'test/fixtures/graphs/simple_example.csv';

/** A goal-loop step's answer in the seed's JSON: the model runs `name` with `args`. */
function step(name: string, args: Record<string, unknown>): string {
  const said = `I will run ${name}.`;
  return JSON.stringify({
    thoughts: {
      text: said,
      reasoning: 'It serves the goal.',
      plan: '- do it',
      criticism: 'none',
      speak: said,
    },
    command: { name, args },
  });
}

const write = (file: string) => step('write_to_file', { file, text: `${file} by the agent\n` });
const complete = (reason: string) => step('task_complete', { reason });

/** Each run's goal names its token, and its answers are the rule of that token. */
const SCRIPT = {
  rules: [
    // Once the user's feedback is in the history, the model follows it.
    { match: 'says: name it right.txt', reply: [write('right.txt'), complete('right.txt is written')] },
    { match: 'token-approve', reply: [write('approved.txt'), complete('approved.txt is written')] },
    { match: 'token-refuse', reply: [write('refused.txt'), complete('never reached')] },
    {
      match: 'token-countdown',
      reply: [write('one.txt'), write('two.txt'), write('three.txt'), complete('three files are written')],
    },
    { match: 'token-feedback', reply: [write('wrong.txt')] },
    { match: 'token-owner', reply: [write('mine.txt'), complete('mine.txt is written')] },
    { match: 'token-unasked', reply: [write('kept.txt'), step('delete_file', { file: 'kept.txt' })] },
    { match: 'token-stop', reply: [write('never.txt')] },
    { match: 'token-busy', reply: [write('busy.txt')] },
  ],
};

interface RunList {
  data: RunView[];
}

interface Setup {
  server: ServeProcess;
  workspace: string;
  headers: Record<string, string>;
}

/** `meta-agent serve` on a fresh workspace and data folder, with `args` after the defaults. */
async function serve(args: string[] = [], env: Record<string, string> = {}) {
  const root = await mkdtemp(join(tmpdir(), 'serve-runs-'));
  const script = join(root, 'runs.script.json');
  await writeFile(script, JSON.stringify(SCRIPT));
  const workspace = join(root, 'workspace');
  const server = await startServe(
    [
      GRAPH,
      '--port',
      '0',
      '--script',
      script,
      '--workspace',
      workspace,
      '--data',
      join(root, 'data'),
      ...args,
    ],
    { env },
  );
  return { server, workspace };
}

function call(setup: Setup, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${setup.server.url}${path}`, {
    method,
    headers: { ...setup.headers, ...(body !== undefined && { 'Content-Type': 'application/json' }) },
    ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
}

/** An error answered in OpenAI's shape. */
interface Refusal {
  error: { message: string; type: string; param: string | null; code: string };
}

/** The body of `response`, whose status must be `status`: a run's view unless said otherwise. */
async function json<T = RunView>(response: Response, status: number): Promise<T> {
  const body = (await response.json()) as T;
  expect(response.status, JSON.stringify(body)).toBe(status);
  return body;
}

/** Starts a run of `goal` and opens its event stream. */
async function startRun(setup: Setup, goal: string) {
  const run = await json(await call(setup, 'POST', '/v1/runs', { goals: [goal] }), 201);
  const events = streamedEvents(await call(setup, 'GET', `/v1/runs/${run.id}/events`));
  return { id: run.id as string, view: run, events };
}

const awaiting = (event: StreamedEvent) => event.event === 'goal.awaiting';
const types = (events: StreamedEvent[]) => events.map((event) => event.event);

async function savedRun(workspace: string) {
  const folder = join(workspace, '.meta-agent', 'runs');
  const [file] = await readdir(folder);
  return await loadRunFile(join(folder, file!));
}

describe('goal runs over HTTP, on a server without --yes or --allow', () => {
  const setup = {} as Setup;
  let ownFolder: string;
  beforeAll(async () => {
    const started = await serve(['--log-format', 'none']);
    Object.assign(setup, started, { headers: {} });
    ownFolder = join(started.workspace, 'local');
  });
  afterAll(() => setup.server.stop());

  it('waits for an answer before a command with an effect, and runs it once answered y', async () => {
    const { id, view, events } = await startRun(setup, 'token-approve: write approved.txt');
    expect(view).toMatchObject({
      id,
      name: 'Agent',
      goals: ['token-approve: write approved.txt'],
      workspace: 'local',
      spend: { steps: 0, maxSteps: 20 },
    });
    const before = await readUntil(events, awaiting);
    expect(before.find((event) => event.event === 'goal.started')?.data.workspace).toBe('local');
    expect(before.at(-1)!.data).toMatchObject({ name: 'write_to_file', args: { file: 'approved.txt' } });
    expect(await json(await call(setup, 'GET', `/v1/runs/${id}`), 200)).toMatchObject({
      status: 'awaiting',
      awaiting: { step: 1, name: 'write_to_file', args: { file: 'approved.txt' } },
    });
    expect(existsSync(join(ownFolder, 'approved.txt'))).toBe(false);

    const answered = await json(await call(setup, 'POST', `/v1/runs/${id}/answer`, { answer: 'y' }), 200);
    expect(answered.status).not.toBe('awaiting');
    const after = await readToEnd(events);
    expect(after.find((event) => event.event === 'goal.authorized')?.data).toMatchObject({ by: 'user' });
    expect(after.at(-1)).toMatchObject({ event: 'goal.ended', data: { reason: 'task_complete' } });
    expect(await readFile(join(ownFolder, 'approved.txt'), 'utf8')).toBe('approved.txt by the agent\n');
    expect(await json(await call(setup, 'GET', `/v1/runs/${id}`), 200)).toMatchObject({
      status: 'ended',
      ended: { reason: 'task_complete', detail: 'approved.txt is written' },
      spend: { steps: 2 },
    });
  });

  it('does not run a command answered n, and ends the run', async () => {
    const { id, events } = await startRun(setup, 'token-refuse: write refused.txt');
    await readUntil(events, awaiting);
    await json(await call(setup, 'POST', `/v1/runs/${id}/answer`, { answer: 'n' }), 200);
    const after = await readToEnd(events);
    expect(types(after)).not.toContain('goal.result');
    expect(after.at(-1)).toMatchObject({ event: 'goal.ended', data: { reason: 'user' } });
    expect(existsSync(join(ownFolder, 'refused.txt'))).toBe(false);
    const view = await json(await call(setup, 'GET', `/v1/runs/${id}`), 200);
    expect(view).toMatchObject({ status: 'ended', ended: { reason: 'user' } });
  });

  it('runs the next N commands without asking after y -N', async () => {
    const { id, events } = await startRun(setup, 'token-countdown: write three files');
    await readUntil(events, awaiting);
    await json(await call(setup, 'POST', `/v1/runs/${id}/answer`, { answer: 'y -3' }), 200);
    const after = await readToEnd(events);
    expect(types(after)).not.toContain('goal.awaiting');
    const authorized = after
      .filter((event) => event.event === 'goal.authorized')
      .map((event) => event.data.by);
    expect(authorized).toEqual(['user', 'continuous', 'continuous', 'no-effect']);
    for (const file of ['one.txt', 'two.txt', 'three.txt'])
      expect(existsSync(join(ownFolder, file))).toBe(true);
    expect(after.at(-1)).toMatchObject({ event: 'goal.ended', data: { reason: 'task_complete' } });
  });

  it('gives feedback to the model instead of running the command, and the model follows it', async () => {
    const { id, events } = await startRun(setup, 'token-feedback: write a file');
    await readUntil(events, awaiting);
    await json(await call(setup, 'POST', `/v1/runs/${id}/answer`, { answer: 'name it right.txt' }), 200);
    const next = await readUntil(events, awaiting);
    expect(next.find((event) => event.event === 'goal.refused')?.data).toMatchObject({
      name: 'write_to_file',
      feedback: 'name it right.txt',
    });
    expect(next.at(-1)!.data).toMatchObject({ args: { file: 'right.txt' } });
    await json(await call(setup, 'POST', `/v1/runs/${id}/answer`, { answer: 'yes' }), 200);
    await readToEnd(events);
    expect(existsSync(join(ownFolder, 'wrong.txt'))).toBe(false);
    expect(existsSync(join(ownFolder, 'right.txt'))).toBe(true);
  });

  it('answers 409 to an answer when the run waits for none', async () => {
    const runs = await json<RunList>(await call(setup, 'GET', '/v1/runs'), 200);
    const ended = runs.data.find((run) => run.status === 'ended')!;
    const refused = await json<Refusal>(
      await call(setup, 'POST', `/v1/runs/${ended.id}/answer`, { answer: 'y' }),
      409,
    );
    expect(refused.error).toMatchObject({ type: 'conflict_error', code: 'run_not_awaiting' });
  });

  it('lists its runs, the newest first, and replays a finished run’s events from Last-Event-ID', async () => {
    const { data } = await json<RunList>(await call(setup, 'GET', '/v1/runs'), 200);
    expect(data.map((run) => run.goals[0]!.split(':')[0])).toEqual([
      'token-feedback',
      'token-countdown',
      'token-refuse',
      'token-approve',
    ]);
    const first = data.at(-1)!;
    const all = await readToEnd(streamedEvents(await call(setup, 'GET', `/v1/runs/${first.id}/events`)));
    expect(all.at(-1)!.event).toBe('goal.ended');
    const resumed = await fetch(`${setup.server.url}/v1/runs/${first.id}/events`, {
      headers: { 'Last-Event-ID': all.at(-3)!.id! },
    });
    expect(types(await readToEnd(streamedEvents(resumed)))).toEqual(types(all.slice(-2)));
  });

  it('refuses a body it cannot use with a 400 in OpenAI’s error shape', async () => {
    const cases: Array<[unknown, string]> = [
      [{ goals: [] }, 'goals'],
      [{ goals: ['one', 'two', 'three', 'four', 'five', 'six'] }, 'goals'],
      [{ goals: ['  '] }, 'goals.0'],
      [{ goal: 'a typo' }, 'goals'],
      [{ goals: ['ok'], maxSteps: 0 }, 'maxSteps'],
      [{ goals: ['ok'], maxSteps: 21 }, 'maxSteps'],
    ];
    for (const [body, param] of cases) {
      const refused = await json<Refusal>(await call(setup, 'POST', '/v1/runs', body), 400);
      expect(refused.error, JSON.stringify(body)).toMatchObject({ type: 'invalid_request_error', param });
      expect(refused.error.message).toEqual(expect.any(String));
    }
    const notJson = await json<Refusal>(await call(setup, 'POST', '/v1/runs', '{"goals": ['), 400);
    expect(notJson.error.code).toBe('invalid_json');
    const anyRun = (await json<RunList>(await call(setup, 'GET', '/v1/runs'), 200)).data[0]!;
    const noAnswer = await json<Refusal>(
      await call(setup, 'POST', `/v1/runs/${anyRun.id}/answer`, { answer: ' ' }),
      400,
    );
    expect(noAnswer.error.param).toBe('answer');
    expect((await json<Refusal>(await call(setup, 'GET', '/v1/runs/nothing-here'), 404)).error.code).toBe(
      'run_not_found',
    );
  });
});

describe('goal runs over HTTP, on a server with keys', () => {
  const [first, second] = ['first-key', 'second-key'];
  const setup = {} as Setup;
  const as = (key: string): Setup => ({ ...setup, headers: { Authorization: `Bearer ${key}` } });
  beforeAll(async () => {
    Object.assign(
      setup,
      await serve(['--log-format', 'none'], { META_AGENT_API_KEYS: `${first},${second}` }),
    );
  });
  afterAll(() => setup.server.stop());

  it('shows a run to its own key only, which alone may answer it, in its own folder', async () => {
    const { id, events } = await startRun(as(first), 'token-owner: write mine.txt');
    await readUntil(events, awaiting);
    const other = as(second);
    for (const [method, path, body] of [
      ['GET', `/v1/runs/${id}`],
      ['GET', `/v1/runs/${id}/events`],
      ['POST', `/v1/runs/${id}/answer`, { answer: 'y' }],
    ] as const) {
      const refused = await json<Refusal>(await call(other, method, path, body), 404);
      expect(refused.error.code).toBe('run_not_found');
    }
    expect((await json<RunList>(await call(other, 'GET', '/v1/runs'), 200)).data).toEqual([]);
    expect((await json<Refusal>(await call(setup, 'GET', '/v1/runs'), 401)).error.code).toBe(
      'invalid_api_key',
    );

    await json(await call(as(first), 'POST', `/v1/runs/${id}/answer`, { answer: 'y' }), 200);
    await readToEnd(events);
    const folder = `key-${keyDigest(first).slice(0, 12)}`;
    expect((await json(await call(as(first), 'GET', `/v1/runs/${id}`), 200)).workspace).toBe(folder);
    expect(existsSync(join(setup.workspace, folder, 'mine.txt'))).toBe(true);
    expect(existsSync(join(setup.workspace, `key-${keyDigest(second).slice(0, 12)}`, 'mine.txt'))).toBe(
      false,
    );
  });

  it('runs a bounded number of one key’s runs at once, and refuses more with 429', async () => {
    const busy = [];
    for (let n = 0; n < 4; n++) {
      const run = await startRun(as(second), `token-busy: run ${n}`);
      await readUntil(run.events, awaiting);
      busy.push(run);
    }
    const refused = await call(as(second), 'POST', '/v1/runs', { goals: ['token-busy: one more'] });
    expect((await json<Refusal>(refused, 429)).error).toMatchObject({
      type: 'rate_limit_error',
      code: 'too_many_in_progress',
    });
    expect(refused.headers.get('Retry-After')).toBeTruthy();
    await json(await call(as(first), 'POST', '/v1/runs', { goals: ['token-owner: the other key'] }), 201);
    for (const { id, events } of busy) {
      await json(await call(as(second), 'POST', `/v1/runs/${id}/answer`, { answer: 'n' }), 200);
      await readToEnd(events);
    }
    await json(await call(as(second), 'POST', '/v1/runs', { goals: ['token-busy: room again'] }), 201);
  });
});

describe('goal runs over HTTP, on a server with --yes', () => {
  const setup = {} as Setup;
  beforeAll(async () =>
    Object.assign(setup, await serve(['--yes', '--log-format', 'none']), { headers: {} }),
  );
  afterAll(() => setup.server.stop());

  it('runs what the server’s flags allow without asking, and still asks before deleting', async () => {
    const { id, events } = await startRun(setup, 'token-unasked: write, then delete');
    const before = await readUntil(events, awaiting);
    expect(before.find((event) => event.event === 'goal.authorized')?.data).toMatchObject({
      name: 'write_to_file',
      by: 'yes',
    });
    expect(before.at(-1)!.data).toMatchObject({ name: 'delete_file' });
    await json(await call(setup, 'POST', `/v1/runs/${id}/answer`, { answer: 'n' }), 200);
    await readToEnd(events);
    expect(existsSync(join(setup.workspace, 'local', 'kept.txt'))).toBe(true);
  });
});

describe('a server stopped while a run waits for an answer', () => {
  it('exits 0 at SIGTERM without waiting for the answer, the run saved where it stood', async () => {
    const setup = { ...(await serve(['--grace', '600'])), headers: {} };
    const { id, events } = await startRun(setup, 'token-stop: write never.txt');
    await readUntil(events, awaiting);
    const stopped = await setup.server.stop('SIGTERM');
    expect(stopped.code).toBe(0);
    const saved = await savedRun(join(setup.workspace, 'local'));
    expect(saved).toMatchObject({
      id,
      pending: { phase: 'answered', command: { name: 'write_to_file', args: { file: 'never.txt' } } },
    });
    expect(saved.ended).toBeUndefined();
    expect(existsSync(join(setup.workspace, 'local', 'never.txt'))).toBe(false);
  });
});
