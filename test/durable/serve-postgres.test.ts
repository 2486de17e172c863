/**
 * `meta-agent serve --database` and `meta-agent worker` as a user runs them: built CLI processes on one
 * PostgreSQL, talked to through the real `openai` client. The agent's model is a loopback OpenAI server
 * that echoes the message tag (`msg-…`) it was last shown and counts the tags it saw, so a reply says
 * which message it answered and after how much of the conversation.
 */
import { resolve } from 'node:path';
import OpenAI from 'openai';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIServer, type ChatRequestBody, type OpenAIServer } from '../support/openai-server.js';
import { freshDatabase } from '../support/postgres.js';
import { runCli } from '../support/run-cli.js';
import { startServe, type ServeProcess } from '../support/serve.js';
import { startWorker, type WorkerProcess } from '../support/worker.js';

const ECHO = resolve('test/fixtures/serve/echo.autogram.json');
const GUIDE = resolve('test/fixtures/serve/guide.autogram.json');

let model: OpenAIServer;
const stop: Array<() => Promise<unknown>> = [];

/** `You said msg-x (n).`: the last tag shown, and how many different tags the prompt held. */
function echo(body: ChatRequestBody) {
  const tags = JSON.stringify(body.messages).match(/msg-[\w-]+/g) ?? [];
  const text = `You said ${tags.at(-1) ?? 'nothing'} (${new Set(tags).size}).`;
  return tags.at(-1)?.includes('slow') ? { text, delayMs: 1500 } : text;
}

beforeAll(async () => {
  model = await startOpenAIServer({ reply: echo });
});
afterAll(async () => {
  for (const close of stop.splice(0).reverse()) await close().catch(() => undefined);
  await model?.close();
});

const MODEL_ARGS = () => ['--base-url', model.url, '--model', 'gpt-4o-mini'];

async function serve(url: string, args: string[] = [], graphs = [ECHO]): Promise<ServeProcess> {
  const server = await startServe([...graphs, '--port', '0', '--database', url, ...MODEL_ARGS(), ...args]);
  stop.push(() => server.stop());
  return server;
}

async function worker(url: string, graphs = [ECHO]): Promise<WorkerProcess> {
  const started = await startWorker([...graphs, '--database', url, ...MODEL_ARGS()]);
  stop.push(() => started.stop());
  return started;
}

function client(server: ServeProcess): OpenAI {
  return new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'none', maxRetries: 0 });
}

type Message = OpenAI.ChatCompletionMessageParam;

/** Says `text` after `history` (and in conversation `id`, with idempotency key `key`, when given). */
async function say(server: ServeProcess, text: string, history: Message[] = [], id?: string, key?: string) {
  const { data, response } = await client(server)
    .chat.completions.create(
      { model: 'echo', messages: [...history, { role: 'user', content: text }] },
      {
        headers: {
          ...(id !== undefined && { 'X-Conversation-Id': id }),
          ...(key !== undefined && { 'Idempotency-Key': key }),
        },
      },
    )
    .withResponse();
  return { reply: data.choices[0]!.message.content!, id: response.headers.get('x-conversation-id')! };
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string, values: unknown[] = []) {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    return (await db.query<T>(sql, values)).rows;
  } finally {
    await db.end();
  }
}

describe('serve and worker on PostgreSQL', () => {
  it('goes on with a conversation on another server, by its id or by its history', async () => {
    const url = await freshDatabase();
    const [a, b] = await Promise.all([serve(url), serve(url)]);
    expect((await say(a, 'msg-1', [], 'ann')).reply).toBe('You said msg-1 (1).');
    expect((await say(b, 'msg-2', [], 'ann')).reply).toBe('You said msg-2 (2).');

    const first = await say(b, 'msg-x');
    const history: Message[] = [
      { role: 'user', content: 'msg-x' },
      { role: 'assistant', content: first.reply },
    ];
    const second = await say(a, 'msg-y', history);
    expect(second).toEqual({ id: first.id, reply: 'You said msg-y (2).' });

    const shown = (await fetch(`${b.url}/v1/conversations/${first.id}`).then((r) => r.json())) as {
      messages: { content: string }[];
    };
    expect(shown.messages.map((m) => m.content)).toEqual([
      'msg-x',
      'You said msg-x (1).',
      'msg-y',
      'You said msg-y (2).',
    ]);
    // The pg driver's warning about DBOS's queries is not the user's business.
    expect(a.stderr() + b.stderr()).not.toMatch(/DeprecationWarning|already executing a query/);
  });

  it('answers a retried request, on either server, with the one reply it recorded, and stores the turn once', async () => {
    const url = await freshDatabase();
    const [a, b] = await Promise.all([serve(url), serve(url)]);
    const opened = await say(a, 'msg-1', [], 'bob');
    const history: Message[] = [
      { role: 'user', content: 'msg-1' },
      { role: 'assistant', content: opened.reply },
    ];
    const asked = model.chatRequests().length;
    const replies = await Promise.all([
      say(a, 'msg-2', history, 'bob'),
      say(b, 'msg-2', history, 'bob'),
      say(b, 'msg-2', history),
    ]);
    expect(replies.map((r) => r.reply)).toEqual(Array(3).fill('You said msg-2 (2).'));
    // Once more, after the conversation moved on: the client lost the answer and sends the same again.
    expect((await say(a, 'msg-2', history)).reply).toBe('You said msg-2 (2).');
    expect(model.chatRequests().length - asked).toBe(1);
    const turns = await query(url, `select turn from meta_agent.conversation_turns where key = 'serve:bob'`);
    expect(turns).toHaveLength(2);

    // A first message has no history to be known by: its Idempotency-Key names it, and the
    // conversation it started.
    const once = await say(a, 'msg-first', [], undefined, 'key-1');
    expect(await say(b, 'msg-first', [], undefined, 'key-1')).toEqual(once);
    expect((await say(b, 'msg-first', [], undefined, 'key-2')).id).not.toBe(once.id);
    expect(model.chatRequests().length - asked).toBe(3);
  });

  it('streams a turn run here piece by piece, and one run by a worker as one piece', async () => {
    const url = await freshDatabase();
    const streamed = async (server: ServeProcess, text: string) => {
      const stream = await client(server).chat.completions.create({
        model: 'echo',
        stream: true,
        messages: [{ role: 'user', content: text }],
      });
      const pieces: string[] = [];
      for await (const chunk of stream) pieces.push(chunk.choices[0]?.delta.content ?? '');
      return pieces.filter(Boolean);
    };
    const here = await serve(url);
    expect((await streamed(here, 'msg-here')).join('')).toBe('You said msg-here (1).');
    await here.stop();
    const queueing = await serve(url, ['--max-running', '0']);
    await worker(url);
    expect(await streamed(queueing, 'msg-there')).toEqual(['You said msg-there (1).']);
    const runs = await query<{ executor_id: string }>(
      url,
      `select executor_id from dbos.workflow_status where name = 'serve.turn' order by created_at`,
    );
    expect(runs.map((run) => run.executor_id.split('-')[0])).toEqual(['serve', 'worker']);
  });

  it('leaves every turn to the workers with --max-running 0; a worker refuses a graph it was not given, saying so', async () => {
    const url = await freshDatabase();
    const server = await serve(url, ['--max-running', '0'], [ECHO, GUIDE]);
    await worker(url, [ECHO]);
    expect((await say(server, 'msg-1', [], 'carl')).reply).toBe('You said msg-1 (1).');
    const refused = await client(server)
      .chat.completions.create({ model: 'guide', messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.ConflictError);
    expect((refused as Error).message).toMatch(
      /worker .* was not given; give every worker the graph files the servers have/,
    );
  });

  it('finishes a dead worker’s turn on the other worker within 30 s, without restarting it', async () => {
    const url = await freshDatabase();
    const server = await serve(url, ['--max-running', '0']);
    const workers = await Promise.all([worker(url), worker(url)]);
    const asking = say(server, 'msg-slow', [], 'dora');
    let holder: WorkerProcess | undefined;
    while (!holder) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const [run] = await query<{ executor_id: string }>(
        url,
        `select executor_id from dbos.workflow_status where name = 'serve.turn' and status = 'PENDING'`,
      );
      holder = workers.find((w) => w.executorId === run?.executor_id);
    }
    await holder.stop('SIGKILL');
    const killed = Date.now();
    expect((await asking).reply).toBe('You said msg-slow (1).');
    expect(Date.now() - killed).toBeLessThan(30_000);
    const [done] = await query<{ executor_id: string }>(
      url,
      `select executor_id from dbos.workflow_status where name = 'serve.turn'`,
    );
    expect(done?.executor_id).toBe(workers.find((w) => w !== holder)!.executorId);
    expect(await query(url, `select * from meta_agent.served_turns`)).toHaveLength(1);
  }, 60_000);

  it('stops a worker on SIGTERM (exit 0) or Ctrl+C (exit 130), and refuses to start one without a database', async () => {
    const url = await freshDatabase();
    const stopped = await (await worker(url)).stop('SIGTERM');
    expect(stopped, stopped.stderr).toMatchObject({ code: 0 });
    const interrupted = await (await worker(url)).stop('SIGINT');
    expect(interrupted, interrupted.stderr).toMatchObject({ code: 130 });
    const none = await runCli(['worker', ECHO]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^error: a worker takes its work from a database, and none was named\n/);
  });
});
