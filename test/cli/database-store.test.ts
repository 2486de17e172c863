import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/postgres/database.js';
import { STORE_MIGRATIONS } from '../../src/store/postgres.js';
import { startReplayServer, type ReplayStep } from '../support/replay-server.js';
import { runCli } from '../support/run-cli.js';
import { freshDatabase } from '../support/postgres.js';

// The commands that keep their work in the store, pointed at PostgreSQL: what a user sees is the same
// as with files, and nothing is written beside the command.

const root = new URL('../../', import.meta.url).pathname;
const GREETER = join(root, 'test/fixtures/cli/greeter.autogram.json');
const FLOW = join(root, 'examples/plan-task.flow.json');
const FLOW_SCRIPT = join(root, 'examples/plan-task.script.json');

let url: string;
let dir: string;
let cwd: string;
let script: string;

beforeAll(async () => {
  url = await freshDatabase();
  dir = await mkdtemp(join(tmpdir(), 'meta-agent-db-cli-'));
  cwd = join(dir, 'work');
  await writeFile(
    (script = join(dir, 'greeter.script.json')),
    JSON.stringify({
      rules: [
        { role: 'classifier', reply: 'A' },
        // The first rule whose text the prompt holds answers, and a prompt holds the earlier instructions.
        { role: 'chatbot', match: 'glad to hear it', reply: 'Glad to hear it. Goodbye!' },
        { role: 'chatbot', match: 'how they feel', reply: 'How are you today, Ann?' },
        { role: 'chatbot', match: 'ask for their name', reply: 'Hello! What is your name?' },
      ],
    }),
  );
  await mkdir(cwd);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const scripted = ['--provider', 'scripted', '--script'];

describe('chat --state NAME in PostgreSQL', () => {
  it('continues the conversation in a second process, and refuses to go on once it ended', async () => {
    const first = await runCli(['chat', GREETER, '--state', 'ann', ...scripted, script, '--database', url], {
      input: 'I am Ann\n',
      cwd,
    });
    expect(first.code).toBe(0);
    expect(first.stdout).toBe('Hello! What is your name?\nHow are you today, Ann?\n');
    // The variable names the same database as the flag did.
    const second = await runCli(['chat', GREETER, '--state', 'ann', ...scripted, script], {
      input: 'Great, thanks\n',
      cwd,
      env: { META_AGENT_DATABASE_URL: url },
    });
    expect(second.code).toBe(0);
    expect(second.stdout).toBe('Glad to hear it. Goodbye!\n');
    const after = await runCli(['chat', GREETER, '--state', 'ann', ...scripted, script, '--database', url], {
      input: 'hello?\n',
      cwd,
    });
    expect(after.code).toBe(2);
    expect(after.stderr).toContain('error: the conversation saved in the database as "ann" has ended');
    expect(await readdir(cwd)).toEqual([]);
  });

  it('starts a new conversation under another name', async () => {
    const bob = await runCli(['chat', GREETER, '--state', 'bob', ...scripted, script, '--database', url], {
      input: 'I am Bob\n',
      cwd,
    });
    expect(bob.code).toBe(0);
    expect(bob.stdout).toBe('Hello! What is your name?\nHow are you today, Ann?\n');
  });
});

describe('a self-edited conversation in PostgreSQL', () => {
  it('resumes with the graph its agent edited, and history lists the versions kept there', async () => {
    const GROWER = join(root, 'test/fixtures/cli/grower.autogram.json');
    const first = await runCli(['chat', GROWER, '--self-referential', '--state', 'grow', '--database', url], {
      input: 'hi\n',
      cwd,
    });
    expect(first).toMatchObject({ code: 0, stdout: 'Say anything.\nI grew a node.\n', stderr: '' });
    const second = await runCli(['chat', GROWER, '--state', 'grow', '--database', url], {
      input: 'bye\n',
      cwd,
    });
    expect(second).toMatchObject({ code: 0, stdout: 'That is all.\n', stderr: '' });
    const history = await runCli(['history', 'grow', '--database', url], { cwd });
    expect(history.code).toBe(0);
    expect(history.stdout).toMatch(/^grower \(grow\): version 2, 4 nodes\n/);
    expect(history.stdout).toMatch(/\n +1 +\S+ +grow +add +grown\n +2 +\S+ +grow +update +grow\n$/);
  });
});

describe('the first use of a database', () => {
  it('makes the tables once when two processes start on it together', async () => {
    const empty = await freshDatabase();
    const [ann, bob] = await Promise.all(
      ['ann', 'bob'].map((name) =>
        runCli(['chat', GREETER, '--state', name, ...scripted, script, '--database', empty], {
          input: `I am ${name}\n`,
          cwd,
        }),
      ),
    );
    for (const result of [ann!, bob!]) {
      expect(result.code).toBe(0);
      expect(result.stdout).toBe('Hello! What is your name?\nHow are you today, Ann?\n');
    }
    const db = await openDatabase(empty);
    try {
      const { rows } = await db.pool.query(`select part, version from meta_agent.migrations`);
      expect(rows).toEqual([{ part: 'store', version: STORE_MIGRATIONS.length }]);
      const keys = await db.pool.query(`select key from meta_agent.conversations order by key`);
      expect(keys.rows).toEqual([{ key: 'ann' }, { key: 'bob' }]);
    } finally {
      await db.close();
    }
  });
});

describe('flow run --state NAME in PostgreSQL', () => {
  it('keeps the run under its name: the next command starts the next pass', async () => {
    const args = ['flow', 'run', FLOW, '--state', 'plan', ...scripted, FLOW_SCRIPT, '--database', url];
    const first = await runCli([...args, '--input', 'task=move a small office'], { cwd });
    expect(first.code).toBe(0);
    const second = await runCli(args, { cwd });
    expect(second.code).toBe(0);
    expect(second.stderr).toMatch(/pass 2/);
    expect(await readdir(cwd)).toEqual([]);
  });
});

describe('run in PostgreSQL after kill -9', () => {
  const LINES = 5;
  const steps: ReplayStep[] = [
    ...Array.from({ length: LINES }, (_, i): ReplayStep => ({
      name: 'append_to_file',
      args: { file: 'log.txt', text: `line ${i + 1}\n` },
    })),
    { name: 'task_complete', args: { reason: 'logged' } },
  ];
  /** Where in a step the process is killed, one after the other. */
  const MOMENTS = ['goal.step', 'goal.command', 'goal.authorized', 'goal.result', 'goal.spend'];

  it('resumes the run by its key at every step and never appends a line twice', async () => {
    // Each answer takes a while, so a kill sent at a step lands before the run can finish.
    const server = await startReplayServer(steps, 'json', { latencyMs: 150 });
    try {
      const workspace = join(dir, 'ws');
      const args = ['--yes', '--json', '--base-url', server.url, '--model', 'gpt-4o-mini', '--database', url];
      const first = await runCli(['run', '--goal', 'log five lines', '--workspace', workspace, ...args], {
        killWhen: killAt(1, MOMENTS[0]!),
        cwd,
      });
      const key = / as run (\S+) after every step/.exec(first.stderr)?.[1];
      expect(key).toMatch(/^[0-9a-f]{8,32}$/);
      // The tests' server has no pgvector: the run goes on, its memory in the workspace, and says so.
      expect(first.stdout).toContain("this run's memory is kept in its workspace instead");
      const outcomes = [first.signal ?? first.code];
      for (let step = 2; step <= LINES && outcomes.at(-1) === 'SIGKILL'; step++) {
        const result = await runCli(['run', '--resume', key!, ...args], {
          killWhen: killAt(step, MOMENTS[(step - 1) % MOMENTS.length]!),
          cwd,
        });
        outcomes.push(result.signal ?? result.code);
      }
      if (outcomes.at(-1) === 'SIGKILL')
        outcomes.push((await runCli(['run', '--resume', key!, ...args], { cwd })).code);
      expect(outcomes.filter((outcome) => outcome === 'SIGKILL').length).toBeGreaterThanOrEqual(3);
      expect(outcomes.at(-1)).toBe(0);
      const lines = (await readFile(join(workspace, 'log.txt'), 'utf8')).trim().split('\n');
      expect(new Set(lines).size).toBe(lines.length);
      expect(lines.length).toBeGreaterThanOrEqual(LINES - 2);
      // The run is in the database, not in the workspace's runs folder.
      expect(await readdir(join(workspace, '.meta-agent')).catch(() => [])).not.toContain('runs');
      const done = await runCli(['run', '--resume', key!, ...args], { cwd });
      expect(done.code).toBe(2);
      expect(done.stderr).toContain('is complete (task_complete: logged)');
    } finally {
      await server.close();
    }
  });

  function killAt(step: number, type: string): (stderr: string, stdout: string) => boolean {
    return (_stderr, stdout) =>
      stdout
        .split('\n')
        .some((line) => line.startsWith(`{"type":"${type}"`) && line.includes(`"step":${step}`));
  }
});

describe('a database that cannot be used', () => {
  it('refuses a URL that is not a postgres one in one line, exit 2, before anything runs', async () => {
    const result = await runCli(['chat', GREETER, '--state', 'x', '--database', 'mysql://me@host/db'], {
      cwd,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('error: the database URL must start with postgres://, not mysql://\n');
  });

  it('says a server that does not answer is unreachable, exit 1, never showing the password', async () => {
    const result = await runCli(['chat', GREETER, '--state', 'x'], {
      cwd,
      env: { META_AGENT_DATABASE_URL: 'postgres://me:secret@127.0.0.1:9/db' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^error: cannot use the database at postgres:\/\/me:\*\*\*@127\.0\.0\.1:9\/db: /,
    );
    expect(result.stderr).not.toContain('secret');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
