import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import {
  startOpenAIServer,
  type ChatAnswer,
  type ChatRequestBody,
  type OpenAIServer,
} from '../support/openai-server.js';
import { chatCommand, checkCanRun, cliEnv, root, tmuxInstalled, tmuxSkipNote } from './chat-cli.js';
import { TmuxSession } from './tmux.js';

// The built CLI in a real terminal, for what only a terminal shows: keys as one read of the terminal
// delivers them, a conversation resumed from its --state file, and the last screen of a failed run.

const SIZE = { columns: 120, rows: 40 };

/** A two-node quiz: the agent greets, then asks; each reply comes from the server by its instruction. */
const QUIZ = {
  format: 'meta-agent/autogram@1',
  name: 'quiz',
  nodes: [
    {
      name: 'greet',
      action: 'chat',
      instruction: 'Greet the user and ask whether they would like a short quiz.',
      transitions: ['ask'],
    },
    {
      name: 'ask',
      action: 'chat',
      instruction: 'Ask the user one short general-knowledge question.',
      transitions: ['greet'],
    },
  ],
};

const GREETING = 'Hello! Would you like a short quiz?';
const QUESTION = 'Which planet is known as the Red Planet?';

describe.skipIf(!tmuxInstalled)(
  `meta-agent chat in a terminal: keys, resuming, failing (tmux)${tmuxSkipNote}`,
  () => {
    let server: OpenAIServer;
    let dir: string;
    let graph: string;
    let tmux: TmuxSession | undefined;
    /** What the server answers instead of the quiz's lines, when a test sets it. */
    let refusal: ChatAnswer | undefined;

    beforeAll(async () => {
      checkCanRun();
      server = await startOpenAIServer({
        reply: (body: ChatRequestBody) => {
          if (refusal) return refusal;
          const last = body.messages.at(-1)?.content ?? '';
          return last.includes(QUIZ.nodes[0]!.instruction) ? GREETING : QUESTION;
        },
      });
      dir = await mkdtemp(join(tmpdir(), 'meta-agent-chat-tmux-'));
      graph = join(dir, 'quiz.autogram.json');
      await writeFile(graph, JSON.stringify(QUIZ));
    });

    afterEach(async () => {
      await tmux?.kill();
      tmux = undefined;
      refusal = undefined;
    });

    afterAll(async () => {
      await server?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    const model = () => ['--base-url', server.url, '--model', 'test-model'];
    const start = async (args: string[]) =>
      (tmux = await TmuxSession.start({
        command: chatCommand([graph, ...model(), ...args]),
        cwd: root,
        env: cliEnv(),
        size: SIZE,
      }));

    it('moves focus once for each of two Tabs sent at once', async () => {
      const chat = await start([]);
      await chat.waitFor((screen) => screen.includes(`Agent › ${GREETING}`) && screen.includes('› █'), {
        what: 'the greeting and an open reply line',
      });
      // One send-keys call: the terminal hands both Tabs to the program in one read.
      await chat.press('Tab', 'Tab');
      const screen = await chat.waitFor((text) => text.includes('▸ Node'), {
        what: 'focus on the inspector',
      });
      expect(screen).not.toContain('▸ Graph');
      expect(screen).toContain('· waiting for your reply · Tab: panels · ?: help · q: quit');
      // Out of the reply line, q quits: the chat is done, not interrupted.
      await chat.press('q');
      expect(await chat.waitForExit()).toBe(0);
    });

    it('shows the earlier turns of a resumed --state file and marks where it stands', async () => {
      const state = join(dir, 'quiz.state.json');
      const first = await runCli(['chat', graph, ...model(), '--state', state], { input: 'yes please\n' });
      expect(first).toMatchObject({ code: 0, stdout: `${GREETING}\n${QUESTION}\n` });

      const chat = await start(['--state', state]);
      const screen = await chat.waitFor((text) => text.includes('› █'), { what: 'an open reply line' });
      expect(screen).toContain(`Agent › ${GREETING}\nUser › yes please\nAgent › ${QUESTION}`);
      const rows = screen.split('\n');
      expect(rows.find((row) => row.includes(' ask chat'))).toMatch(/^.▶ +ask chat/);
      expect(rows.find((row) => row.includes(' greet chat'))).toMatch(/^.• +greet chat/);
    });

    it('ends a run the model server fails with the error on screen, no reply awaited, and a failure status', async () => {
      const chat = await start([]);
      await chat.waitFor((screen) => screen.includes(`Agent › ${GREETING}`) && screen.includes('› █'), {
        what: 'the greeting and an open reply line',
      });
      refusal = { fault: 'bad-request', message: 'the model refuses this prompt' };
      await chat.type('yes please');
      await chat.press('Enter');
      const status = await chat.waitForExit();
      const screen = await chat.capture();
      expect(status).not.toBe(0);
      expect(screen).toMatch(
        /^✗ stopped by an error: node "ask": the model server at \S+ rejected the request/m,
      );
      expect(screen).toContain('› the run stopped at an error');
      expect(screen).not.toContain('waiting for your reply');
    });
  },
);
