/**
 * Conversations on more than one machine, on loopback: two `serve --database` processes and two
 * `worker`s on one PostgreSQL hold 100 conversations of 10 turns each through POST
 * /v1/chat/completions, spread over both servers, while a worker, a server and a worker again are killed
 * with `kill -9` and started again. A client whose request fails sends it again to the other server, as a
 * client behind a load balancer would. Every turn must be answered and stored exactly once, in order,
 * and each conversation must be what `meta-agent chat --state` makes of the same messages alone, on the
 * files. The agent's model is a loopback OpenAI server whose reply names the message it answered and
 * how many messages it was shown, so a turn lost, repeated or run out of order shows in the transcript.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStateFile } from '../../src/store/conversation-journal.js';
import { loadConversationState } from '../../src/store/postgres.js';
import { messagesOf } from '../../src/serve/messages.js';
import { startOpenAIServer, type ChatRequestBody, type OpenAIServer } from '../support/openai-server.js';
import { freshDatabase } from '../support/postgres.js';
import { runCli } from '../support/run-cli.js';
import { startServe, type ServeProcess } from '../support/serve.js';
import { startWorker, type WorkerProcess } from '../support/worker.js';

const ECHO = resolve('test/fixtures/serve/echo.autogram.json');
const CONVERSATIONS = 100;
const TURNS = 10;

let model: OpenAIServer;
const running = new Set<{ stop(signal?: NodeJS.Signals): Promise<unknown> }>();

/** `You said msg-x (n).`: the last message shown, and how many different messages the prompt held. */
function echo(body: ChatRequestBody): string {
  const tags = JSON.stringify(body.messages).match(/msg-[\w-]+/g) ?? [];
  return `You said ${tags.at(-1) ?? 'nothing'} (${new Set(tags).size}).`;
}

beforeAll(async () => {
  model = await startOpenAIServer({ reply: echo });
});
afterAll(async () => {
  await Promise.all([...running].map((process) => process.stop().catch(() => undefined)));
  await model?.close();
});

const MODEL_ARGS = () => ['--base-url', model.url, '--model', 'gpt-4o-mini'];

async function serve(url: string): Promise<ServeProcess> {
  // A small room, so that most turns go through the queue to whichever process takes them.
  const args = ['--port', '0', '--database', url, '--max-running', '4', '--log-format', 'none'];
  const server = await startServe([ECHO, ...args, ...MODEL_ARGS()]);
  running.add(server);
  return server;
}

async function worker(url: string): Promise<WorkerProcess> {
  const started = await startWorker([ECHO, '--database', url, ...MODEL_ARGS()]);
  running.add(started);
  return started;
}

async function kill(process: ServeProcess | WorkerProcess): Promise<void> {
  await process.stop('SIGKILL');
  running.delete(process);
}

interface Said {
  role: 'user' | 'assistant';
  content: string;
}

/** The message of conversation `c` at turn `t`. */
const message = (c: number, t: number) => `msg-c${c}-t${t}`;

describe('serve and workers on one PostgreSQL, with kill -9', () => {
  it('answers and stores 1,000 turns of 100 conversations exactly once, in order, as chat --state alone would', async () => {
    // Each conversation begins with the agent's opening turn, as `chat` begins it, then takes 10 messages.
    const url = await freshDatabase();
    const servers = await Promise.all([serve(url), serve(url)]);
    const workers = await Promise.all([worker(url), worker(url)]);
    let answered = 0;
    let retried = 0;

    /** Sends one turn, to server `first` and then to the other, until one answers it. */
    const send = async (first: number, headers: Record<string, string>, messages: Said[]) => {
      for (let attempt = 0; ; attempt++) {
        const server = servers[(first + attempt) % servers.length]!;
        const response = await fetch(`${server.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', ...headers },
          body: JSON.stringify({ model: 'echo', messages }),
        }).catch(() => undefined);
        if (response?.ok) {
          const body = (await response.json()) as { choices: { message: { content: string } }[] };
          return { reply: body.choices[0]!.message.content, id: response.headers.get('x-conversation-id')! };
        }
        // A server that is down, or one killed while it answered: the other is asked the same.
        if (response && response.status < 500)
          throw new Error(`${response.status}: ${await response.text()}`);
        retried++;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };

    /** Opens conversation `c` with the agent's opening turn (as `chat` begins), on the native route. */
    const open = async (c: number): Promise<Said[]> => {
      const response = await fetch(`${servers[c % 2]!.url}/v1/conversations`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ graph: 'echo', id: `dist-${c}` }),
      });
      expect(response.status).toBe(201);
      return [{ role: 'assistant', content: ((await response.json()) as { reply: string }).reply }];
    };

    /**
     * Conversation `c`'s turns: the even ones name it by X-Conversation-Id, the odd ones are known by the
     * history alone from their second message on (every opening is the same, and so is a history of it
     * alone); every request resends the history, which names its turn when it is sent again.
     */
    const converse = async (c: number, history: Said[]) => {
      for (let t = 0; t < TURNS; t++) {
        const text = message(c, t);
        const named = c % 2 === 0 || t === 0;
        const headers: Record<string, string> = named ? { 'X-Conversation-Id': `dist-${c}` } : {};
        const answer = await send(c + t, headers, [...history, { role: 'user', content: text }]);
        expect(answer.id).toBe(`dist-${c}`);
        history.push({ role: 'user', content: text }, { role: 'assistant', content: answer.reply });
        answered++;
      }
      return history;
    };

    const until = async (count: number) => {
      while (answered < count) await new Promise((resolve) => setTimeout(resolve, 50));
    };
    const kills = (async () => {
      await until(150);
      await kill(workers[0]!);
      workers[0] = await worker(url);
      await until(400);
      await kill(servers[0]!);
      servers[0] = await serve(url);
      await until(650);
      await kill(workers[1]!);
      workers[1] = await worker(url);
    })();
    const started = Date.now();
    const openings = await Promise.all(Array.from({ length: CONVERSATIONS }, (_, c) => open(c)));
    const conversations = await Promise.all(openings.map((history, c) => converse(c, history)));
    await kills;
    console.log(
      `${answered} turns in ${((Date.now() - started) / 1000).toFixed(1)} s through 3 kills; ${retried} requests sent again`,
    );
    await Promise.all([...running].map((process) => process.stop()));
    running.clear();

    // Every reply answered its own message after all the earlier ones.
    for (const [c, history] of conversations.entries())
      for (let t = 0; t < TURNS; t++)
        expect(history[2 * t + 2]!.content).toBe(`You said ${message(c, t)} (${t + 1}).`);

    const db = new pg.Pool({ connectionString: url, max: 4 });
    try {
      const served = await db.query<{ count: string }>(`select count(*) from meta_agent.served_turns`);
      expect(Number(served.rows[0]!.count)).toBe(CONVERSATIONS * (TURNS + 1));
      const turns = await db.query<{ key: string; count: string }>(
        `select key, count(*) from meta_agent.conversation_turns group by key`,
      );
      expect(turns.rows).toHaveLength(CONVERSATIONS);
      expect(new Set(turns.rows.map((row) => Number(row.count)))).toEqual(new Set([TURNS + 1]));

      // Each conversation as `chat --state` has it, alone, on the files: the same replies, the same state.
      const folder = mkdtempSync(join(tmpdir(), 'meta-agent-distributed-'));
      const alone = async (c: number) => {
        const state = join(folder, `${c}.state.json`);
        const lines = Array.from({ length: TURNS }, (_, t) => `${message(c, t)}\n`).join('');
        const chat = await runCli(['chat', ECHO, '--state', state, ...MODEL_ARGS()], { input: lines });
        expect(chat.code).toBe(0);
        const history = conversations[c]!;
        expect(chat.stdout.trimEnd().split('\n')).toEqual(
          history.filter((said) => said.role === 'assistant').map((said) => said.content),
        );
        const stored = await loadConversationState(db, `serve:dist-${c}`);
        expect(messagesOf(stored)).toEqual(messagesOf(await loadStateFile(state)));
        expect(messagesOf(stored)).toEqual(history);
      };
      for (let c = 0; c < CONVERSATIONS; c += 4)
        await Promise.all([c, c + 1, c + 2, c + 3].filter((n) => n < CONVERSATIONS).map(alone));
    } finally {
      await db.end();
    }
  }, 600_000);
});
