/**
 * The exit code table of the README ("Exit codes"), run through every command: 0 done, 1 the work
 * failed, 2 fix the input first, 130 interrupted. Each row is one way a user meets that code.
 */
import { EventEmitter, once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedUrl, startOpenAIServer, type OpenAIServer } from '../support/openai-server.js';
import { runCli, type CliResult, type RunCliOptions } from '../support/run-cli.js';

/** What a shell's `$?` shows: the exit code, or 128 + the signal's number for a process a signal ended. */
function shellStatus(result: CliResult): number {
  return result.code ?? 128 + constants.signals[result.signal!];
}

interface Row {
  /** The command line after `meta-agent`; `$URL` is the loopback server, `$DIR` a scratch folder. */
  args: string[];
  code: 0 | 1 | 2 | 130;
  why: string;
  /** A function for options made when the row runs. */
  options?: RunCliOptions | (() => RunCliOptions);
}

/** Says when the server receives a call it will answer only after a minute. */
const slowCalls = new EventEmitter();

const ROWS: Row[] = [
  { args: ['--help'], code: 0, why: 'help asked for' },
  { args: ['--version'], code: 0, why: 'version asked for' },
  { args: ['nope'], code: 2, why: 'an unknown command' },
  { args: ['validate', '--bogus', '$DIR/ok.json'], code: 2, why: 'an unknown option' },

  { args: ['doctor', '--base-url', '$URL', '-m', 'm'], code: 0, why: 'every check passed' },
  { args: ['doctor', '--base-url', '$EMPTY_URL'], code: 1, why: 'the server lists no models' },
  { args: ['doctor'], code: 1, why: 'no server, and the embedded model cannot be downloaded (offline)' },

  { args: ['ask', 'hello', '--base-url', '$URL', '-m', 'm'], code: 0, why: 'an answer' },
  { args: ['ask', 'BROKEN', '--base-url', '$URL', '-m', 'm'], code: 1, why: 'the server refused the call' },
  { args: ['ask', 'hello'], code: 2, why: 'no server, and the embedded model cannot be downloaded' },
  {
    args: ['ask', 'SLOW', '--base-url', '$URL', '-m', 'm'],
    code: 130,
    why: 'Ctrl+C while the model answers',
    options: () => ({ interruptOn: once(slowCalls, 'arrived') }),
  },

  {
    args: [
      'design',
      'a quiz bot',
      '-o',
      '$DIR',
      '--provider',
      'scripted',
      '--script',
      'examples/quiz-designer.script.json',
    ],
    code: 0,
    why: 'a graph designed',
  },
  {
    args: [
      'design',
      'a quiz bot',
      '-o',
      '$DIR',
      '--provider',
      'scripted',
      '--script',
      '$DIR/useless.script.json',
    ],
    code: 1,
    why: 'the answers never make a graph',
  },
  {
    args: ['design', 'a quiz bot', '-o', '$DIR'],
    code: 2,
    why: 'no server, and the embedded model cannot be downloaded',
  },
  {
    args: ['design', 'a quiz bot', '-o', '$DIR', '--base-url', '$URL', '-m', 'm'],
    code: 130,
    why: 'Ctrl+C during the design',
    options: { interruptWhen: (stderr) => stderr.includes('✓ outline') },
  },

  {
    args: ['chat', '$DIR/chat.json', '--base-url', '$URL', '-m', 'm'],
    code: 0,
    why: 'the conversation ended',
    options: { input: 'fine\n' },
  },
  {
    args: ['chat', '$DIR/throws.json'],
    code: 1,
    why: 'a node failed',
    options: { input: 'go\n' },
  },
  { args: ['chat', '$DIR/lint.json'], code: 2, why: 'the graph has errors' },
  { args: ['chat', '$DIR/empty.csv'], code: 2, why: 'the file is not a graph' },
  { args: ['chat', '$DIR/missing.json'], code: 2, why: 'no such file' },
  {
    args: ['chat', '$DIR/slow.json', '--base-url', '$URL', '-m', 'm'],
    code: 130,
    why: 'Ctrl+C while the agent answers',
    options: { input: 'go\n', interruptWhen: (_stderr, stdout) => stdout.includes('Ready?') },
  },

  {
    args: ['call', 'test/fixtures/engine/fibonacci.autogram.json', 'fibonacci(10)'],
    code: 0,
    why: 'a result',
  },
  { args: ['call', '$DIR/throws.json', 'boom()'], code: 1, why: 'the function failed' },
  { args: ['call', '$DIR/throws.json', 'nothing()'], code: 2, why: 'no such function' },
  { args: ['call', '$DIR/lint.json', 'f()'], code: 2, why: 'the graph has errors' },

  {
    args: [
      'simulate',
      'test/fixtures/cli/quiz.autogram.json',
      '--provider',
      'scripted',
      '--script',
      'test/fixtures/cli/quiz.script.json',
      '-n',
      '1',
      '-t',
      '1',
    ],
    code: 0,
    why: 'a report',
  },
  {
    args: [
      'simulate',
      '$DIR/throws.json',
      '--provider',
      'scripted',
      '--script',
      '$DIR/useless.script.json',
      '-n',
      '1',
      '-t',
      '1',
    ],
    code: 1,
    why: 'a node failed',
  },
  { args: ['simulate', '$DIR/empty.json', '-n', '1'], code: 2, why: 'the file is not a graph' },
  {
    args: ['simulate', '$DIR/slow.json', '--base-url', '$URL', '-m', 'm', '-n', '2', '-t', '2'],
    code: 130,
    why: 'Ctrl+C during the simulation',
    options: { interruptWhen: (stderr) => stderr.includes('simulating') },
  },

  {
    args: [
      'run',
      '-g',
      'write it',
      '-w',
      '$DIR/ws-done',
      '--yes',
      '--provider',
      'scripted',
      '--script',
      '$DIR/run.script.json',
    ],
    code: 0,
    why: 'the run ended with task_complete',
  },
  {
    args: [
      'run',
      '-g',
      'write it',
      '-w',
      '$DIR/ws-refused',
      '--provider',
      'scripted',
      '--script',
      '$DIR/run.script.json',
    ],
    code: 1,
    why: 'nothing may run without a terminal (no --yes or --allow): the run ended refused',
  },
  { args: ['run', '-w', '$DIR/ws-none', '--base-url', '$URL', '-m', 'm'], code: 2, why: 'no goal given' },
  {
    args: ['run', '-g', 'SLOW', '-w', '$DIR/ws-slow', '--yes', '--base-url', '$URL', '-m', 'm'],
    code: 130,
    why: 'Ctrl+C while the model answers (the run is saved)',
    options: () => ({ interruptOn: once(slowCalls, 'arrived') }),
  },

  { args: ['memory', 'add', 'a fact', '-w', '$DIR/ws-memory'], code: 0, why: 'a memory added, by words' },
  {
    args: ['memory', 'forget', '--match', 'no such fact', '-w', '$DIR/ws-memory'],
    code: 1,
    why: 'no memory matched',
  },
  {
    args: ['memory', 'add', 'x', '-n', 'Not/A/Name', '-w', '$DIR/ws-memory'],
    code: 2,
    why: 'no namespace name',
  },
  { args: ['memory', 'reindex', '-w', '$DIR/ws-memory'], code: 2, why: 'no model server is configured' },

  {
    args: ['serve', '$DIR/ok.json', '--port', '0', '--data', '$DIR/serve', '--base-url', '$URL', '-m', 'm'],
    code: 130,
    why: 'Ctrl+C while it serves',
    options: { interruptWhen: (_stderr, stdout) => stdout.includes('listening on') },
  },
  {
    args: ['serve', '$DIR/ok.json', '--host', '0.0.0.0', '--port', '0'],
    code: 2,
    why: 'reachable, with no keys',
  },
  { args: ['serve', '$DIR/missing.json', '--port', '0'], code: 2, why: 'no such file' },

  { args: ['worker', '$DIR/ok.json'], code: 2, why: 'no database named' },

  { args: ['mcp', '$DIR/ok.json', '--base-url', '$URL', '-m', 'm'], code: 0, why: 'its client closed stdin' },
  { args: ['mcp', '$DIR/missing.json'], code: 2, why: 'no such file' },

  { args: ['validate', '$DIR/ok.json'], code: 0, why: 'no errors' },
  { args: ['validate', '$DIR/lint.json'], code: 1, why: 'the graph has errors' },
  { args: ['validate', '$DIR/empty.json'], code: 1, why: 'an empty JSON file is not a graph' },
  { args: ['validate', '$DIR/empty.csv'], code: 1, why: 'an empty spreadsheet is not a graph' },
  { args: ['validate', '$DIR/missing.json'], code: 2, why: 'no such file' },

  { args: ['show', '$DIR/ok.json'], code: 0, why: 'a summary' },
  { args: ['show', '$DIR/empty.json'], code: 2, why: 'the file is not a graph' },

  { args: ['export', '$DIR/ok.json', '--format', 'mermaid'], code: 0, why: 'an export' },
  {
    args: ['export', '$DIR/ok.json', '--format', 'dot', '-o', '$DIR/no/such/folder.dot'],
    code: 1,
    why: 'the output cannot be written',
  },
  { args: ['export', '$DIR/ok.json', '--format', 'png'], code: 2, why: 'an unknown format' },
  { args: ['export', '$DIR/empty.csv', '--format', 'dot'], code: 2, why: 'the file is not a graph' },

  { args: ['history', '$DIR/ok.json'], code: 0, why: 'the versions' },
  { args: ['history', '$DIR/ok.json', '--diff', '0', '9'], code: 2, why: 'no such version' },
  { args: ['history', '$DIR/bad.json'], code: 2, why: 'the file is not JSON' },
];

describe('exit codes', () => {
  let dir: string;
  let server: OpenAIServer;
  let noServer: string;
  let emptyServer: OpenAIServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'meta-agent-exit-'));
    const write = (name: string, content: unknown) =>
      writeFileSync(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content));
    write('ok.json', { nodes: [{ name: 'a', action: 'chat_exact', instruction: 'Hi.' }] });
    write('lint.json', { nodes: [{ name: 'f()', action: 'chat', transitions: ['nowhere'] }] });
    write('empty.json', '');
    write('empty.csv', '');
    write('bad.json', '{ nodes');
    write('chat.json', {
      nodes: [
        { name: 'start1', action: 'chat_exact', instruction: 'Ready?', transitions: ['answer'] },
        { name: 'answer', action: 'chat', instruction: 'Say something kind.', transitions: ['quit'] },
      ],
    });
    write('slow.json', {
      nodes: [
        {
          name: 'start1',
          action: 'chat_exact',
          instruction: 'Ready?',
          userInstructions: ['say go'],
          transitions: ['answer'],
        },
        { name: 'answer', action: 'chat', instruction: 'SLOW', transitions: ['quit'] },
      ],
    });
    write('throws.json', {
      nodes: [
        {
          name: 'start1',
          action: 'chat_exact',
          instruction: 'Say go.',
          userInstructions: ['say go'],
          transitions: ['fail'],
        },
        { name: 'fail', action: 'code', instruction: "throw new Error('boom')", transitions: ['start1'] },
        { name: 'boom()', action: 'code', instruction: "throw new Error('boom')", transitions: ['return'] },
      ],
    });
    write('useless.script.json', { rules: [], default: 'I would rather not.' });
    const step = (name: string, args: Record<string, string>) =>
      JSON.stringify({ thoughts: { text: `${name} now` }, command: { name, args } });
    write('run.script.json', {
      rules: [
        {
          reply: [
            step('write_to_file', { file: 'out.txt', text: 'done' }),
            step('write_to_file', { file: 'again.txt', text: 'done' }),
            step('task_complete', { reason: 'written' }),
          ],
        },
      ],
    });
    server = await startOpenAIServer({
      reply: (body) => {
        const prompt = body.messages.map((m) => m.content).join('\n');
        const colour = /^([A-Z])\. blue$/m.exec(prompt)?.[1];
        if (colour) return colour;
        if (prompt.includes('BROKEN')) return { fault: 'bad-request', message: 'refused' };
        if (prompt.includes('SLOW') || /\bDOT\b/.test(prompt)) {
          slowCalls.emit('arrived');
          return { text: 'late', delayMs: 60_000 };
        }
        return 'A fine answer.';
      },
    });
    noServer = await closedUrl();
    emptyServer = await startOpenAIServer({ models: [] });
  });

  afterAll(async () => {
    await server.close();
    await emptyServer.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(ROWS)('meta-agent $args.0 exits $code: $why', async ({ args, code, options: given }) => {
    const options = typeof given === 'function' ? given() : given;
    const result = await runCli(
      args.map((arg) =>
        arg.replace('$URL', server.url).replace('$EMPTY_URL', emptyServer.url).replace('$DIR', dir),
      ),
      { ...options, env: { META_AGENT_PROBE_URLS: noServer, ...options?.env } },
    );
    expect({ status: shellStatus(result), stderr: result.stderr }).toMatchObject({ status: code });
  });
});
