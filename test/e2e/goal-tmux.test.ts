import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkCanRun, cliEnv, root, tmuxInstalled, tmuxSkipNote } from './chat-cli.js';
import { TmuxSession } from './tmux.js';
import { loadRunFile } from '../../src/store/run-journal.js';
import { runCli } from '../support/run-cli.js';

// The real built CLI (`npx tsc -p .` first) in a real terminal: tmux runs `meta-agent run` with scripted
// answers in the seed's JSON (write a file, then task_complete); keys go in with send-keys and the
// screen is read back.

const artifact = join(root, 'test-artifacts/goal-tmux.txt');
const SIZE = { columns: 120, rows: 40 };
const GREETING = 'Hello from the goal loop';

/** The model's two answers, replayed in order by one chatbot rule. */
const SCRIPT = {
  rules: [
    {
      role: 'chatbot',
      reply: [
        JSON.stringify({
          thoughts: {
            text: 'I will write the greeting.',
            reasoning: 'The goal names hello.txt.',
            plan: '- write hello.txt\n- finish',
            criticism: 'None yet.',
            speak: 'Writing hello.txt.',
          },
          command: { name: 'write_to_file', args: { file: 'hello.txt', text: GREETING } },
        }),
        JSON.stringify({
          thoughts: {
            text: 'Done.',
            reasoning: 'The file is written.',
            plan: '- finish',
            criticism: '',
            speak: 'All done.',
          },
          command: { name: 'task_complete', args: { reason: 'hello.txt is written' } },
        }),
      ],
    },
  ],
};

/** `meta-agent run` on the script, in `dir`, with its workspace at `dir/ws` (and `goal` unless asked for). */
function runCommand(goal: string[] = ['--goal', 'write hello.txt']): string[] {
  return [
    process.execPath,
    '--no-node-snapshot',
    join(root, 'bin/meta-agent.js'),
    'run',
    ...goal,
    '--provider',
    'scripted',
    '--script',
    'script.json',
    '--workspace',
    'ws',
  ];
}

/** The approval box for step 1's write and an empty answer line. */
const asksToWrite = (screen: string) =>
  screen.includes('Step 1: run write_to_file?') && screen.includes('› █');

describe.skipIf(!tmuxInstalled)(`meta-agent run in a terminal (tmux)${tmuxSkipNote}`, () => {
  let dir: string;
  let tmux: TmuxSession | undefined;

  beforeAll(async () => {
    checkCanRun();
  });

  afterEach(async () => {
    await tmux?.kill();
    tmux = undefined;
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function start(
    command = runCommand(),
    before?: (dir: string) => Promise<void>,
  ): Promise<TmuxSession> {
    dir = await mkdtemp(join(tmpdir(), 'meta-agent-goal-'));
    await writeFile(join(dir, 'script.json'), JSON.stringify(SCRIPT));
    await before?.(dir);
    tmux = await TmuxSession.start({ command, cwd: dir, env: cliEnv(), size: SIZE });
    return tmux;
  }

  it('asks for a name, a role and goals when none were given, as AutoGPT does', async () => {
    const session = await start(runCommand([]));
    const answer = async (prompt: string, text: string) => {
      await session.waitFor((screen) => screen.includes(prompt), { what: prompt });
      if (text) await session.type(text);
      await session.press('Enter');
    };
    await answer('Name your AI', 'Poet');
    await answer("Describe your AI's role", '');
    await answer('Goal 1:', 'write hello.txt');
    await answer('Goal 2:', '');
    const asked = await session.waitFor(asksToWrite, { what: 'the approval box for write_to_file' });
    expect(asked).toContain('Poet');
    expect(asked).toContain('  1. write hello.txt');
  }, 60_000);

  /** A first run in the same workspace, in a pipe: Poet, with its role and one goal. */
  async function firstRun(dir: string): Promise<void> {
    const args = ['--name', 'Poet', '--role', 'an AI that writes greetings', '--yes', '--no-memory'];
    const first = await runCli([...runCommand().slice(3), ...args], { cwd: dir });
    expect(first.code, first.stderr).toBe(0);
  }

  /** Answers `text` once `prompt` is on the screen. */
  const answer = async (session: TmuxSession, prompt: string, text: string) => {
    await session.waitFor((screen) => screen.includes(prompt), { what: prompt });
    if (text) await session.type(text);
    await session.press('Enter');
  };

  it('offers the last settings at the next start in the same workspace, as AutoGPT does: y runs with them', async () => {
    const session = await start(runCommand([]), firstRun);
    const offered = await session.waitFor((screen) => screen.includes('Continue (y/n):'), {
      what: 'the offer of the last settings',
    });
    expect(offered).toContain('Welcome back! Would you like me to return to being Poet?');
    expect(offered).toContain(
      'Continue with the last settings?\nName:  Poet\nRole:  an AI that writes greetings\nGoals:\n  1. write hello.txt\n',
    );
    await answer(session, 'Continue (y/n):', 'y');
    const asked = await session.waitFor(asksToWrite, { what: 'the approval box for write_to_file' });
    expect(asked).toContain('Poet');
    expect(asked).toContain('  1. write hello.txt');
    expect(asked).not.toContain('Name your AI');
  }, 60_000);

  it('asks anew when the last settings are declined with n, and keeps the new ones', async () => {
    const session = await start(runCommand([]), firstRun);
    await answer(session, 'Continue (y/n):', 'n');
    await answer(session, 'Name your AI', 'Bard');
    await answer(session, "Describe your AI's role", 'an AI that writes songs');
    await answer(session, 'Goal 1:', 'write song.txt');
    await answer(session, 'Goal 2:', '');
    const asked = await session.waitFor(asksToWrite, { what: 'the approval box for write_to_file' });
    expect(asked).toContain('Bard');
    expect(asked).toContain('  1. write song.txt');
    expect(await readFile(join(dir, 'ws/.meta-agent/ai_settings.yaml'), 'utf8')).toBe(
      'ai_name: Bard\nai_role: an AI that writes songs\nai_goals:\n  - write song.txt\n',
    );
  }, 60_000);

  it('asks before writing, runs the command on y, and ends with task_complete', async () => {
    const session = await start();
    const asked = await session.waitFor(asksToWrite, { what: 'the approval box for write_to_file' });
    expect(asked).toContain('  1. write hello.txt');
    expect(asked).toContain('“Writing hello.txt.”');
    expect(asked).toContain(`▶ write_to_file file=hello.txt text="${GREETING}"`);
    expect(asked).toContain('write_to_file needs your approval');
    expect(asked).toMatch(/^step 1\/50 · tokens [\d,]+ · cost local · time \d+s · .*\[scripted\]/m);
    expect(asked).toMatch(/^run file: ws\/\.meta-agent\/runs\/Agent-[0-9a-f]+\.run\.json/m);

    await session.type('y');
    await session.waitFor((screen) => screen.includes('› y█'), { what: 'y in the answer line' });
    await session.press('Enter');
    const ended = await session.waitFor((screen) => screen.includes('■ run ended: task_complete'), {
      what: 'the end of the run',
    });
    await mkdir(dirname(artifact), { recursive: true });
    await writeFile(artifact, ended);
    expect(ended).toContain('✓ write_to_file ran (approved by you)\n    Wrote 24 bytes to hello.txt.');
    expect(ended).toContain('✓ task_complete ran (no approval needed)');
    expect(ended).toContain('  write  hello.txt');
    expect(ended).toContain('  hello.txt is written');
    expect(ended).not.toContain('Step 1: run write_to_file?');
    expect(await session.waitForExit()).toBe(0);
    expect(await readFile(join(dir, 'ws/hello.txt'), 'utf8')).toBe(GREETING);
  }, 60_000);

  it('shows a notice on the first Ctrl+C, and saves and exits 130 on the second', async () => {
    const session = await start();
    await session.waitFor(asksToWrite, { what: 'the approval box for write_to_file' });
    await session.press('C-c');
    await session.waitFor((screen) => screen.includes('! Ctrl+C: the next command will be asked for'), {
      what: 'the Ctrl+C notice',
    });
    await session.press('C-c');
    expect(await session.waitForExit()).toBe(130);
    const runs = join(dir, 'ws/.meta-agent/runs');
    const files = (await readdir(runs)).filter((name) => name.endsWith('.run.json'));
    expect(files).toHaveLength(1);
    const saved = await loadRunFile(join(runs, files[0]!));
    // The write was never approved: it is asked for again when the run is resumed.
    expect(saved.ended?.reason).toBe('user');
    expect(saved.pending?.command.name).toBe('write_to_file');
    await expect(readFile(join(dir, 'ws/hello.txt'), 'utf8')).rejects.toThrow('ENOENT');
  }, 60_000);
});
