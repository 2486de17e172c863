/**
 * Untrusted text (model replies, code-node output, error messages) must not drive the user's terminal:
 * on a terminal its control sequences are shown escaped; into a pipe or a file it stays as it was.
 * The terminal here is a real pseudo-terminal, from util-linux's `script`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { terminalSafe } from '../../src/tui/terminal-safe.js';
import { fileOf } from '../support/agents.js';
import { startOpenAIServer, type OpenAIServer } from '../support/openai-server.js';
import { runCli } from '../support/run-cli.js';

const run = promisify(execFile);
const bin = fileURLToPath(new URL('../../bin/meta-agent.js', import.meta.url));

/** An OSC 52 clipboard write, a window title, a screen clear and a C1 CSI. */
const HOSTILE = 'A\u001b]52;c;cm0gLXJmIH4=\u0007B\u001b]0;pwned\u0007C\u001b[2J\u001b[HD\u009b31mE';

function hasControl(text: string): boolean {
  // eslint-disable-next-line no-control-regex -- control characters are what this looks for
  return /[\u001b\u0007\u009b]/.test(text);
}

/**
 * Runs `command` (a shell line) with its stdout and stderr on a pseudo-terminal; returns what it showed,
 * whether or not it failed.
 */
async function onTerminal(command: string): Promise<string> {
  const options = { env: { ...process.env, NO_COLOR: '1' }, encoding: 'utf8' } as const;
  return run('script', ['-qec', command, '/dev/null'], options).then(
    ({ stdout }) => stdout,
    (error: { stdout?: string }) => error.stdout ?? '',
  );
}

describe('terminalSafe', () => {
  it('escapes what drives a terminal and keeps line breaks and tabs', () => {
    expect(terminalSafe(HOSTILE)).toBe(
      'A\\u001b]52;c;cm0gLXJmIH4=\\u0007B\\u001b]0;pwned\\u0007C\\u001b[2J\\u001b[HD\\u009b31mE',
    );
    expect(terminalSafe('one\ntwo\tthree\r\nfour')).toBe('one\ntwo\tthree\r\nfour');
    expect(terminalSafe('hidden\roverwritten')).toBe('hidden\\u000doverwritten');
  });
});

describe('on a terminal', () => {
  let server: OpenAIServer;
  let dir: string;

  beforeEach(async () => {
    server = await startOpenAIServer({ defaultAnswer: HOSTILE });
    dir = await mkdtemp(join(tmpdir(), 'meta-agent-tty-'));
  });

  afterEach(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('ask shows a model reply escaped', async () => {
    const shown = await onTerminal(`node ${bin} ask hi --base-url ${server.url} --model gpt-4o-mini`);
    expect(shown).toContain('A\\u001b]52;c;cm0gLXJmIH4=\\u0007B');
    expect(hasControl(shown)).toBe(false);
  });

  it('chat in pipe mode shows replies, code output and errors escaped', async () => {
    const graph = join(dir, 'hostile.autogram.json');
    const file = fileOf([
      { name: 'start1', action: 'chat', instruction: 'Say hi.', transitions: ['log'] },
      {
        name: 'log',
        action: 'code',
        instruction: `console.log(${JSON.stringify(HOSTILE)}); throw new Error(${JSON.stringify(HOSTILE)});`,
        transitions: ['quit'],
      },
    ]);
    await writeFile(graph, JSON.stringify(file));
    const shown = await onTerminal(
      `printf 'hello\\n' | node ${bin} chat ${graph} --base-url ${server.url} --model gpt-4o-mini`,
    );
    expect(shown.match(/A\\u001b\]52/g)?.length).toBe(3);
    expect(shown).toContain('error: node "log"');
    expect(hasControl(shown)).toBe(false);
  });

  it('leaves output into a pipe as it was', async () => {
    const result = await runCli(['ask', 'hi', '--base-url', server.url, '--model', 'gpt-4o-mini']);
    expect(result.stdout).toBe(`${HOSTILE}\n`);
  });
});
