import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, type RunCliOptions } from '../support/run-cli.js';

// Preloaded into the CLI's process (and, through NODE_OPTIONS, into the process it restarts as): lists
// on stderr, at exit, the npm packages the process loaded and whether Node's startup snapshot was off.
const RECORD_PACKAGES = `
import { registerHooks } from 'node:module';
const seen = new Set();
registerHooks({
  load(url, context, next) {
    // A package from node_modules, or one bundled into the CLI: dist/cli/npm-NAME-HASH.js (scripts/bundle-cli.js).
    const match =
      /\\/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(url) ?? /\\/dist\\/cli\\/npm-(.+)-[\\w-]+\\.js$/.exec(url);
    if (match) seen.add(match[1].replace(/^(@[^_]+)_/, '$1/'));
    return next(url, context);
  },
});
process.on('exit', () => {
  process.stderr.write(\`packages: \${[...seen].sort().join(' ')}\\n\`);
  process.stderr.write(\`sandbox-ready: \${process.execArgv.includes('--no-node-snapshot')}\\n\`);
});
`;

interface Startup {
  packages: string[];
  /** Whether the command ran with --no-node-snapshot, which only a restart for the sandbox adds. */
  restarted: boolean;
  stdout: string;
}

async function startup(args: string[], options: RunCliOptions = {}): Promise<Startup> {
  const hook = `data:text/javascript,${encodeURIComponent(RECORD_PACKAGES)}`;
  const { code, stdout, stderr } = await runCli(args, {
    ...options,
    env: { ...options.env, NODE_OPTIONS: `--import=${hook}` },
  });
  expect(code, stderr).toBe(0);
  const packages = /^packages: (.*)$/m.exec(stderr);
  const ready = /^sandbox-ready: (true|false)$/m.exec(stderr);
  if (!packages || !ready) throw new Error(`no package list on stderr:\n${stderr}`);
  return { packages: packages[1]!.split(' ').filter(Boolean), restarted: ready[1] === 'true', stdout };
}

const QUIZ = 'test/fixtures/cli/quiz.autogram.json';

/** Nothing listens here: a graph command given no model must not find one on this machine. */
const NO_SERVER = { META_AGENT_PROBE_URLS: 'http://127.0.0.1:9/v1' };

describe('meta-agent start-up', () => {
  it('prints its help with commander alone: a command loads its implementation when it runs', async () => {
    expect(await startup(['--help'])).toMatchObject({ packages: ['commander'], restarted: false });
  });

  it('validates and shows a JSON graph without the model client, the sandbox, Graphviz or the CSV parser', async () => {
    for (const command of ['validate', 'show'])
      expect(await startup([command, 'meta/designer.autogram.json'])).toMatchObject({
        packages: ['commander', 'zod'],
        restarted: false,
      });
  });

  it('restarts with --no-node-snapshot to call a function of code, and loads no model client or tokenizer', async () => {
    const call = await startup(['call', 'test/fixtures/engine/fibonacci.autogram.json', 'fibonacci(10)'], {
      env: NO_SERVER,
    });
    expect(call).toMatchObject({ stdout: '34\n', restarted: true });
    expect(call.packages).toEqual(['commander', 'isolated-vm', 'node-gyp-build', 'zod']);
    // With an option before the graph, the command itself restarts once its arguments are parsed.
    const later = await startup(
      ['call', '--self-referential', 'test/fixtures/engine/fibonacci.autogram.json', 'fibonacci(3)'],
      { env: NO_SERVER },
    );
    expect(later).toMatchObject({ stdout: '1\n', restarted: true });
  });

  it('chats on a graph without code in the process it started in, without the sandbox or the terminal UI', async () => {
    const chat = await startup(['chat', QUIZ, '--script', 'test/fixtures/cli/quiz.script.json'], {
      input: '4\n',
    });
    expect(chat).toMatchObject({ stdout: 'What is 2 + 2?\nCorrect!\n', restarted: false });
    // The classifier's answer comes from the script; its tokens are counted as a model's would be.
    expect(chat.packages).toEqual(['@dqbd/tiktoken', 'commander', 'zod']);
  });

  it('resumes a saved conversation on a graph without code without restarting', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'startup-'));
    try {
      const state = join(dir, 'quiz.state');
      const args = ['chat', QUIZ, '--state', state, '--script', 'test/fixtures/cli/quiz.script.json'];
      expect(await startup(args, { input: '4\n' })).toMatchObject({ restarted: false });
      expect(await startup(args, { input: '5\n' })).toMatchObject({
        stdout: 'What is 2 + 2?\n',
        restarted: false,
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
