/**
 * execute_shell's containment, with the real bubblewrap: what a command line can and cannot reach. The
 * bubblewrap part is skipped, saying why, on a machine where bubblewrap is missing or cannot make its
 * namespaces (CI installs it: .ci/run).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, readFile, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeShell } from '../../tools/execute-shell.js';
import { findBubblewrap, ShellSandbox } from '../../tools/shell-sandbox.js';

const bubblewrap = findBubblewrap();
const never = new AbortController().signal;

async function workspace(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'shell-ws-'));
  await mkdir(join(root, '.meta-agent'));
  await writeFile(join(root, '.meta-agent', 'run.json'), 'the run file');
  return root;
}

describe.skipIf(!('program' in bubblewrap))(
  `execute_shell in bubblewrap${'problem' in bubblewrap ? ` (skipped: ${bubblewrap.problem})` : ''}`,
  () => {
    let root: string;
    let shell: ShellSandbox;
    let outside: string;
    let server: Server;
    let requests = 0;
    beforeAll(async () => {
      root = await workspace();
      shell = new ShellSandbox(root, { kind: 'bubblewrap', ...(bubblewrap as { program: string }) });
      outside = join(await mkdtemp(join(tmpdir(), 'shell-outside-')), 'secret.txt');
      await writeFile(outside, 'outside secret');
      server = createServer((_, res) => {
        requests += 1;
        res.end('reached');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    });
    afterAll(() => server.close());

    const run = async (commandLine: string) =>
      (await executeShell.run({ command_line: commandLine }, { shell, signal: never })).output;

    it('runs a command line in the workspace and writes files there', async () => {
      expect(await run('echo hello > hello.txt && cat hello.txt && pwd')).toBe(
        'Exit status 0.\nSTDOUT:\nhello\n/workspace\n\nSTDERR:\n',
      );
      expect(await readFile(join(root, 'hello.txt'), 'utf8')).toBe('hello\n');
    });

    it('cannot read files outside the workspace, through a link either, nor the run’s own folder', async () => {
      await symlink(outside, join(root, 'link.txt'));
      const output = await run(
        `cat /etc/shadow; cat ${outside}; cat link.txt; ls ${process.env.HOME ?? '/root'}; cat .meta-agent/run.json`,
      );
      expect(output).toMatch(/^Exit status 1\.\nSTDOUT:\n\nSTDERR:\n/);
      expect(output).not.toContain('outside secret');
      expect(output).not.toContain('the run file');
      expect(output).toContain('/etc/shadow: No such file or directory');
      expect(await run('ls /')).not.toMatch(/\b(home|root|opt|work|var|etc\/shadow)\b/);
    });

    it('cannot write to the system', async () => {
      expect(await run('touch /usr/evil; echo $?')).toMatch(/STDOUT:\n1\n/);
    });

    it('cannot reach the network, not even this machine’s loopback', async () => {
      const { port } = server.address() as AddressInfo;
      const output = await run(
        `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port} && printf "GET / HTTP/1.0\\r\\n\\r\\n" >&3 && cat <&3'`,
      );
      expect(output).toMatch(/Connection refused/);
      expect(requests).toBe(0);
    });

    it('gets a scrubbed environment: no key of the parent’s', async () => {
      process.env.OPENAI_API_KEY = 'sk-parent-secret';
      try {
        const output = await run('env');
        expect(output).not.toContain('sk-parent-secret');
        expect(output.split('STDOUT:\n')[1]!.split('\n\nSTDERR')[0]!.split('\n').sort()).toEqual(
          expect.arrayContaining(['HOME=/workspace', 'LANG=C.UTF-8']),
        );
        expect(output).not.toMatch(/OPENAI|META_AGENT/);
      } finally {
        delete process.env.OPENAI_API_KEY;
      }
    });

    it('is killed at its time limit, with what it started', async () => {
      const quick = new ShellSandbox(
        root,
        { kind: 'bubblewrap', ...(bubblewrap as { program: string }) },
        {
          timeoutMs: 500,
        },
      );
      const started = Date.now();
      const output = (
        await executeShell.run(
          { command_line: '(sleep 30; echo late > late.txt) & echo started; sleep 30' },
          { shell: quick, signal: never },
        )
      ).output;
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(output).toBe(
        'The command ran longer than 0.5 s and was stopped.\nSTDOUT:\nstarted\n\nSTDERR:\n',
      );
    });

    it('keeps the beginning and the end of long output, and says how much was cut', async () => {
      const small = new ShellSandbox(
        root,
        { kind: 'bubblewrap', ...(bubblewrap as { program: string }) },
        {
          outputBytes: 1000,
        },
      );
      const output = (
        await executeShell.run(
          { command_line: 'seq 1 100000; echo the end; echo oops >&2' },
          { shell: small, signal: never },
        )
      ).output;
      const stdout = output.split('STDOUT:\n')[1]!.split('\nSTDERR:')[0]!;
      expect(output).toMatch(/^Exit status 0\./);
      expect(stdout).toMatch(/^1\n2\n3\n/);
      expect(stdout).toMatch(/\n99999\n100000\nthe end\n$/);
      const cut = Number(/\[… (\d+) bytes cut …\]/.exec(stdout)![1]);
      expect(cut + 1000).toBe(
        Buffer.byteLength(`${Array.from({ length: 100000 }, (_, i) => i + 1).join('\n')}\nthe end\n`),
      );
      expect(output.endsWith('STDERR:\noops\n')).toBe(true);
    });
  },
);

describe('execute_shell unconfined (the user’s explicit choice where bubblewrap cannot work)', () => {
  it('still runs in the workspace with a scrubbed environment and a time limit', async () => {
    const root = await workspace();
    const shell = new ShellSandbox(root, { kind: 'unconfined' }, { timeoutMs: 500 });
    process.env.OPENAI_API_KEY = 'sk-parent-secret';
    try {
      const output = (await executeShell.run({ command_line: 'env; pwd' }, { shell, signal: never })).output;
      expect(output).not.toContain('sk-parent-secret');
      expect(output).toContain(`\n${root}\n`);
    } finally {
      delete process.env.OPENAI_API_KEY;
    }
    const slow = (await executeShell.run({ command_line: 'sleep 30' }, { shell, signal: never })).output;
    expect(slow).toMatch(/^The command ran longer than 0.5 s and was stopped\./);
  });
});
