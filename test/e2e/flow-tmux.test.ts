import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIServer, type OpenAIServer } from '../support/openai-server.js';
import { checkCanRun, cliEnv, root, tmuxInstalled, tmuxSkipNote } from './chat-cli.js';
import { TmuxSession } from './tmux.js';

// The real built CLI (`npx tsc -p .` first) in a real terminal: tmux runs `meta-agent flow run`, once on
// the shipped example with its scripted answers, once against a loopback server slow enough to watch
// nodes run and to press Ctrl+C while they do.

const SIZE = { columns: 110, rows: 40 };

function flowCommand(args: readonly string[]): string[] {
  return [process.execPath, '--no-node-snapshot', join(root, 'bin/meta-agent.js'), 'flow', 'run', ...args];
}

describe.skipIf(!tmuxInstalled)(`meta-agent flow run in a terminal (tmux)${tmuxSkipNote}`, () => {
  let dir: string;
  let tmux: TmuxSession | undefined;
  let server: OpenAIServer | undefined;

  beforeAll(async () => {
    checkCanRun();
  });

  afterEach(async () => {
    await tmux?.kill();
    tmux = undefined;
    await server?.close();
    server = undefined;
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('shows every node settle, the temporary node the gate adds, and the answer at the end', async () => {
    dir = await mkdtemp(join(tmpdir(), 'meta-agent-flow-'));
    tmux = await TmuxSession.start({
      command: flowCommand([
        join(root, 'examples/plan-task.flow.json'),
        '--provider',
        'scripted',
        '--script',
        join(root, 'examples/plan-task.script.json'),
      ]),
      cwd: dir,
      env: cliEnv(),
      size: SIZE,
    });
    // The answer is written after the view's last frame, so the screen is read once the command exits.
    expect(await tmux.waitForExit()).toBe(0);
    const ended = await tmux.capture();
    expect(ended).toContain('■ pass 1 ended');
    expect(ended).toMatch(/flow plan-task · pass 1 · concurrency 4/);
    for (const node of ['requirements', 'obstacles', 'resources', 'subgoals', 'challenge', 'gate', 'plan'])
      expect(ended).toMatch(new RegExp(`✓ +${node} `));
    expect(ended).toMatch(/revise \(temporary\)/);
    expect(ended).toContain('+ gate: add node revise');
    expect(ended).toContain('1. Confirm the move date');
  }, 60_000);

  it('shows the independent nodes running at once, and stops on Ctrl+C with the run saved', async () => {
    server = await startOpenAIServer({ latencyMs: 60_000 });
    dir = await mkdtemp(join(tmpdir(), 'meta-agent-flow-'));
    await writeFile(
      join(dir, 'two.flow.json'),
      JSON.stringify({
        nodes: [
          { name: 'left', prompt: 'Left?' },
          { name: 'right', prompt: 'Right?' },
          { name: 'both', prompt: 'Both?', dependencies: ['left', 'right'] },
        ],
      }),
    );
    tmux = await TmuxSession.start({
      command: flowCommand([
        'two.flow.json',
        '--base-url',
        server.url,
        '-m',
        'gpt-4o-mini',
        '--state',
        'two.run.json',
      ]),
      cwd: dir,
      env: cliEnv(),
      size: SIZE,
    });
    const running = await tmux.waitFor(
      (screen) => /left +running/.test(screen) && /right +running/.test(screen),
      {
        what: 'two nodes running at once',
      },
    );
    expect(running).toMatch(/both +· pending|· +both +pending/);
    await tmux.press('C-c');
    const stopped = await tmux.waitFor((screen) => screen.includes('finish the pass with'), {
      what: 'the stop',
    });
    expect(stopped).toContain('meta-agent flow run two.flow.json --state two.run.json');
    // The exit status (130) is test/cli/flow-run.test.ts's to check: here Ctrl+C also stops the shell
    // that would record it, since the view leaves the terminal's own Ctrl+C handling alone.
    const saved = JSON.parse(await readFile(join(dir, 'two.run.json'), 'utf8'));
    expect(saved.current).toMatchObject({ pass: 1, steps: 0, results: {} });
  }, 60_000);
});
