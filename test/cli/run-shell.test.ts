/**
 * execute_shell through `meta-agent run`, a loopback model playing the command lines: off without
 * --allow-shell, asked for (so refused in a pipe) without an allow rule even under --yes, and with both,
 * run in bubblewrap: the workspace only, no network, no keys, a time and an output cap.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { OpenAIServer } from '../support/openai-server.js';
import { startReplayServer, type ReplayStep } from '../support/replay-server.js';
import { commandResults, runCli, type RunCliOptions } from '../support/run-cli.js';
import { findBubblewrap } from '../../tools/shell-sandbox.js';

let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const bubblewrap = findBubblewrap();
/** Said in the title of each test that needs bubblewrap, where it cannot run. */
const skipped = 'problem' in bubblewrap ? ` (skipped: ${bubblewrap.problem})` : '';
const shell = (commandLine: string): ReplayStep => ({
  name: 'execute_shell',
  args: { command_line: commandLine },
});
const complete: ReplayStep = { name: 'task_complete', args: { reason: 'done' } };

async function run(args: string[], steps: ReplayStep[], options: RunCliOptions = {}) {
  server = await startReplayServer(steps, 'tools');
  const root = await mkdtemp(join(tmpdir(), 'run-shell-'));
  const result = await runCli(
    [
      ...['run', '--goal', 'use the shell', '--no-memory', '--json', ...args],
      ...['--workspace', root, '--base-url', server.url, '--model', 'gpt-4o-mini'],
    ],
    options,
  );
  return { root, result, outputs: commandResults(result) };
}

describe('meta-agent run: execute_shell', () => {
  it('is not offered without --allow-shell, and --allow execute_shell alone says what is missing', async () => {
    const { root, result } = await run(['--yes'], [shell('echo hi > hi.txt'), complete]);
    expect(server!.chatRequests()[0]!.tools!.map((tool) => tool.function.name)).not.toContain(
      'execute_shell',
    );
    await expect(readFile(join(root, 'hi.txt'), 'utf8')).rejects.toThrow(/ENOENT/);
    expect(result.code).toBe(0);

    const refused = await run(['--allow', 'execute_shell'], [complete]);
    expect(refused.result.code).toBe(2);
    expect(refused.result.stderr).toBe(
      'error: --allow execute_shell: the run offers execute_shell only with --allow-shell\n' +
        'hint: add --allow-shell to turn it on for this run\n',
    );
  });

  it.skipIf(!('program' in bubblewrap))(
    `is asked for every time: --yes alone does not run it${skipped}`,
    async () => {
      const { root, outputs } = await run(['--allow-shell', '--yes'], [shell('echo hi > hi.txt'), complete]);
      await expect(readFile(join(root, 'hi.txt'), 'utf8')).rejects.toThrow(/ENOENT/);
      expect(outputs.map((step) => step.name)).toEqual(['task_complete']);
      const told = server!
        .chatRequests()[1]!
        .messages.map((message) => message.content)
        .join('\n');
      expect(told).toContain(
        'execute_shell runs a program, which always needs your approval, and there is no terminal to ask in: pass --allow execute_shell to let it run',
      );
    },
  );

  it.skipIf(!('program' in bubblewrap))(
    `with --allow-shell and an allow rule, runs contained: workspace only, no network, no keys, capped${skipped}`,
    async () => {
      const outside = join(await mkdtemp(join(tmpdir(), 'run-shell-outside-')), 'secret.txt');
      await writeFile(outside, 'outside secret');
      let reached = 0;
      const web: Server = createServer((_, res) => {
        reached += 1;
        res.end('reached');
      });
      await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
      const { port } = web.address() as AddressInfo;
      try {
        const { root, result, outputs } = await run(
          ['--allow-shell', '--allow', 'execute_shell', '--shell-timeout', '1'],
          [
            shell('echo hello > hello.txt && cat hello.txt'),
            shell(`cat /etc/shadow ${outside}`),
            shell(`bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port}'`),
            shell('env'),
            shell('sleep 20'),
            complete,
          ],
          { env: { OPENAI_API_KEY: 'sk-parent-secret' } },
        );
        expect(result.code).toBe(0);
        expect(await readFile(join(root, 'hello.txt'), 'utf8')).toBe('hello\n');
        const [hello, files, network, env, slow] = outputs.map((step) => step.output);
        expect(hello).toBe('Exit status 0.\nSTDOUT:\nhello\n\nSTDERR:\n');
        expect(files).toMatch(/^Exit status 1\.\nSTDOUT:\n\nSTDERR:\n/);
        expect(files).not.toContain('outside secret');
        expect(network).toMatch(/Connection refused/);
        expect(reached).toBe(0);
        expect(env).not.toContain('sk-parent-secret');
        expect(slow).toMatch(/^The command ran longer than 1 s and was stopped\./);
      } finally {
        web.close();
      }
    },
  );

  it.skipIf(!('program' in bubblewrap))(
    `keeps 3,000 bytes of a long output, its beginning and end${skipped}`,
    async () => {
      // A long result leaves older steps in short in the prompt, where the replay counts steps: this
      // model goes by what its last result says instead.
      const { outputs } = await run(
        ['--allow-shell', '--allow', 'execute_shell'],
        [
          (prompt) =>
            prompt.includes('bytes cut')
              ? { name: 'task_complete', args: { reason: 'seen' } }
              : { name: 'execute_shell', args: { command_line: 'yes | head -c 200000' } },
        ],
      );
      const [loud] = outputs.map((step) => step.output);
      expect(loud).toMatch(
        /^Exit status 0\.\nSTDOUT:\n(y\n){750}\n\[… 197000 bytes cut …\]\n(y\n){750}\nSTDERR:\n$/,
      );
    },
  );

  it('refuses to start where bubblewrap is missing, unless --allow-unsandboxed-shell says to go unconfined', async () => {
    const noBwrap = { env: { PATH: '/nonexistent' } };
    const { result } = await run(['--allow-shell'], [complete], noBwrap);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      "error: --allow-shell: bubblewrap (bwrap) is not installed, so execute_shell's commands cannot be contained\n" +
        'hint: install bubblewrap (Debian, Ubuntu: apt-get install bubblewrap) where user namespaces are allowed, ' +
        'or pass --allow-unsandboxed-shell to run them unconfined (they can then read your files and reach the network)\n',
    );

    const unconfined = await run(
      ['--allow-unsandboxed-shell', '--allow', 'execute_shell'],
      [shell('echo hi > hi.txt; env'), complete],
      { env: { ...noBwrap.env, OPENAI_API_KEY: 'sk-parent-secret' } },
    );
    expect(unconfined.result.code).toBe(0);
    expect(unconfined.result.stderr).toContain(
      '[shell] bubblewrap (bwrap) is not installed: execute_shell runs its commands unconfined',
    );
    expect(await readFile(join(unconfined.root, 'hi.txt'), 'utf8')).toBe('hi\n');
    expect(unconfined.outputs[0]!.output).not.toContain('sk-parent-secret');
  });
});
