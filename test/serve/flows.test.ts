/**
 * Flow passes over HTTP, end to end: the built CLI's `meta-agent serve` with a flow, its model a
 * loopback OpenAI-compatible server, and a client that runs passes with fetch, reads their reports and
 * follows their events as SSE.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PassView } from '../../src/serve/flow-passes.js';
import { startOpenAIServer, type ChatRequestBody, type OpenAIServer } from '../support/openai-server.js';
import { startServe, type ServeProcess } from '../support/serve.js';
import { readToEnd, streamedEvents } from '../support/sse-client.js';

const FLOW = 'test/fixtures/flow-node/steps.flow.json';
const AGENT = 'test/fixtures/graphs/simple_example.csv';
const [FIRST, SECOND] = ['first-key', 'second-key'];

/** What the model answers each node; a task of "wait" is answered once `release` is called. */
function model() {
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  const reply = async (body: ChatRequestBody) => {
    const prompt = body.messages.map((message) => message.content).join('\n');
    // The steps node's prompt shows the goal node's question and answer before its own.
    if (prompt.includes('List the steps')) return 'Buy flour.\nBake bread.';
    if (prompt.includes('State the goal of: wait')) await released;
    return prompt.includes('State the goal of:') ? 'Fresh bread by noon.' : undefined;
  };
  return { reply, release };
}

interface Served {
  openai: OpenAIServer;
  server: ServeProcess;
  data: string;
  release: () => void;
}

async function serve(args: string[] = []): Promise<Served> {
  const { reply, release } = model();
  const openai = await startOpenAIServer({ reply });
  const data = join(await mkdtemp(join(tmpdir(), 'serve-flows-')), 'data');
  const server = await startServe(
    [FLOW, AGENT, '--port', '0', '--base-url', openai.url, '--model', 'gpt-4o-mini', '--data', data, ...args],
    { env: { META_AGENT_API_KEYS: `${FIRST},${SECOND}` } },
  );
  return { openai, server, data, release };
}

function call(served: Served, key: string, method: string, path: string, body?: unknown) {
  return fetch(`${served.server.url}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${key}`,
      ...(body !== undefined && { 'Content-Type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
}

/** An error answered in OpenAI's shape. */
interface Refusal {
  error: { message: string; type: string; param: string | null; code: string };
}

/** The body of `response`, whose status must be `status`: a pass's view unless said otherwise. */
async function json<T = PassView>(response: Response, status: number): Promise<T> {
  const body = (await response.json()) as T;
  expect(response.status, JSON.stringify(body)).toBe(status);
  return body;
}

describe('flow passes over HTTP', () => {
  let served: Served;
  beforeAll(async () => {
    served = await serve(['--log-format', 'none']);
  });
  afterAll(async () => {
    await served.server.stop();
    await served.openai.close();
  });

  it('runs a pass of a served flow and answers its report, which stays to be fetched', async () => {
    const report = await json(
      await call(served, FIRST, 'POST', '/v1/flows/steps/passes', { inputs: { task: 'bake bread' } }),
      201,
    );
    expect(report).toMatchObject({
      flow: 'steps',
      status: 'finished',
      pass: 1,
      complete: true,
      sinks: ['steps'],
      results: {
        goal: { status: 'done', output: 'Fresh bread by noon.' },
        steps: { status: 'done', output: 'Buy flour.\nBake bread.' },
      },
    });
    expect(report.tokens).toBeGreaterThan(0);
    expect(await json(await call(served, FIRST, 'GET', `/v1/flows/steps/passes/${report.id}`), 200)).toEqual(
      report,
    );
    const saved = JSON.parse(
      await readFile(join(served.data, 'flow-runs', `${report.id}.flow-run.json`), 'utf8'),
    );
    expect(saved).toMatchObject({ flow: 'steps', passes: 1, database: { task: 'bake bread' } });
  });

  it('streams a pass’s flow events, and ends the stream with the pass', async () => {
    const { id } = await json(
      await call(served, FIRST, 'POST', '/v1/flows/steps/passes', { inputs: { task: 'bake bread' } }),
      201,
    );
    const events = await readToEnd(
      streamedEvents(await call(served, FIRST, 'GET', `/v1/flows/steps/passes/${id}/events`)),
    );
    const shown = events.map((event) => event.event).filter((type) => type !== 'model.call');
    expect(shown[0]).toBe('flow.started');
    expect(shown.at(-1)).toBe('flow.ended');
    const done = events.filter((event) => event.event === 'flow.node' && event.data.status === 'done');
    expect(done.map((event) => event.data.node)).toEqual(['goal', 'steps']);
  });

  it('shows a pass to its own key only', async () => {
    const { id } = await json(
      await call(served, FIRST, 'POST', '/v1/flows/steps/passes', { inputs: { task: 'bake bread' } }),
      201,
    );
    for (const path of [`/v1/flows/steps/passes/${id}`, `/v1/flows/steps/passes/${id}/events`])
      expect((await json<Refusal>(await call(served, SECOND, 'GET', path), 404)).error.code).toBe(
        'pass_not_found',
      );
  });

  it('answers 404 for a flow it does not serve and 400 for an agent’s name', async () => {
    const unknown = await json<Refusal>(
      await call(served, FIRST, 'POST', '/v1/flows/nothing/passes', {}),
      404,
    );
    expect(unknown.error).toMatchObject({ type: 'not_found_error', code: 'flow_not_found' });
    const { served: names } = (await (await fetch(`${served.server.url}/healthz`)).json()) as {
      served: string[];
    };
    const agent = names.find((name) => name !== 'steps')!;
    const notFlow = await json<Refusal>(
      await call(served, FIRST, 'POST', `/v1/flows/${agent}/passes`, {}),
      400,
    );
    expect(notFlow.error).toMatchObject({ type: 'invalid_request_error', code: 'not_a_flow' });
  });

  it('refuses inputs the flow does not take, and a pass without the inputs it needs', async () => {
    const missing = await json<Refusal>(await call(served, FIRST, 'POST', '/v1/flows/steps/passes', {}), 400);
    expect(missing.error).toMatchObject({ code: 'missing_input', param: 'inputs.task' });
    const unknown = await json<Refusal>(
      await call(served, FIRST, 'POST', '/v1/flows/steps/passes', { inputs: { task: 'x', colour: 'red' } }),
      400,
    );
    expect(unknown.error).toMatchObject({ code: 'unknown_input', param: 'inputs.colour' });
    const wrongType = await json<Refusal>(
      await call(served, FIRST, 'POST', '/v1/flows/steps/passes', { inputs: { task: 3 } }),
      400,
    );
    expect(wrongType.error.param).toBe('inputs.task');
  });
});

describe('a flow pass past the server’s deadline', () => {
  let served: Served;
  beforeAll(async () => {
    served = await serve(['--deadline', '1', '--log-format', 'none']);
  });
  afterAll(async () => {
    await served.server.stop();
    await served.openai.close();
  });

  it('answers 504 and goes on, its report fetched once it is done', async () => {
    const late = await call(served, FIRST, 'POST', '/v1/flows/steps/passes', { inputs: { task: 'wait' } });
    const body = await json<Refusal>(late, 504);
    expect(body.error.code).toBe('deadline_exceeded');
    const where = late.headers.get('Location')!;
    expect(where).toMatch(/^\/v1\/flows\/steps\/passes\/pass_/);
    expect((await json(await call(served, FIRST, 'GET', where), 200)).status).toBe('running');
    const events = streamedEvents(await call(served, FIRST, 'GET', `${where}/events`));
    served.release();
    expect((await readToEnd(events)).at(-1)!.event).toBe('flow.ended');
    expect(await json(await call(served, FIRST, 'GET', where), 200)).toMatchObject({
      status: 'finished',
      complete: true,
      results: { goal: { output: 'Fresh bread by noon.' } },
    });
  });
});
