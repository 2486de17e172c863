/**
 * `meta-agent run` end to end: the built CLI as a subprocess, talking to a loopback OpenAI-compatible
 * server that replays a fixed list of commands, in the seed's JSON and as native tool calls.
 */
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { OpenAIServer } from '../support/openai-server.js';
import { startOpenAIServer } from '../support/openai-server.js';
import { lastRead, startReplayServer, type AnswerShape, type ReplayStep } from '../support/replay-server.js';
import { rememberAllowRule } from '../../src/autonomous/allow-rules.js';
import { cliConfigDir, runCli, type CliResult, type RunCliOptions } from '../support/run-cli.js';
import { loadRunFile } from '../../src/store/run-journal.js';

let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function workspace(files: Record<string, string> = {}): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'run-cli-'));
  for (const [name, text] of Object.entries(files)) await writeFile(join(root, name), text);
  return root;
}

function run(args: string[], root: string, options: RunCliOptions = {}): Promise<CliResult> {
  return runCli(
    ['run', ...args, '--workspace', root, '--base-url', server!.url, '--model', 'gpt-4o-mini'],
    options,
  );
}

async function runFile(root: string): Promise<string> {
  const folder = join(root, '.meta-agent', 'runs');
  const [name] = await readdir(folder);
  return join(folder, name!);
}

const complete = (reason: string): ReplayStep => ({ name: 'task_complete', args: { reason } });

/** agbenchmark-style tasks: the replayed commands, the files given, and what must be there at the end. */
const TASKS: Array<{
  name: string;
  goal: string;
  files?: Record<string, string>;
  steps: ReplayStep[];
  expect: Record<string, string>;
  /** Flags of this task's run. */
  flags?: string[];
}> = [
  {
    name: 'write a file with given content',
    goal: "Write the word 'Washington' to a .txt file",
    steps: [{ name: 'write_to_file', args: { file: 'output.txt', text: 'Washington' } }, complete('written')],
    expect: { 'output.txt': 'Washington' },
  },
  {
    name: 'sort a CSV',
    goal: 'Sort input.csv by the id column and write the result to output.csv',
    files: { 'input.csv': 'id,name\n3,Carol\n1,Alice\n2,Bob\n' },
    steps: [
      { name: 'read_file', args: { file: 'input.csv' } },
      (prompt) => {
        const [header, ...rows] = lastRead(prompt, 'input.csv').trim().split('\n');
        rows.sort((a, b) => Number(a.split(',')[0]) - Number(b.split(',')[0]));
        return {
          name: 'write_to_file',
          args: { file: 'output.csv', text: `${[header, ...rows].join('\n')}\n` },
        };
      },
      complete('sorted'),
    ],
    expect: { 'output.csv': 'id,name\n1,Alice\n2,Bob\n3,Carol\n' },
  },
  {
    name: 'combine two CSVs',
    goal: 'Combine file1.csv and file2.csv on the ID column into output.csv, sorted by ID',
    files: { 'file1.csv': 'ID,Name\n2,Bob\n1,Alice\n', 'file2.csv': 'ID,Occupation\n1,Engineer\n2,Doctor\n' },
    steps: [
      { name: 'read_file', args: { file: 'file1.csv' } },
      { name: 'read_file', args: { file: 'file2.csv' } },
      (prompt) => {
        const table = (file: string) =>
          lastRead(prompt, file)
            .trim()
            .split('\n')
            .map((line) => line.split(','));
        const [head1, ...rows1] = table('file1.csv');
        const [head2, ...rows2] = table('file2.csv');
        const rows = rows1
          .map((row) => [...row, ...(rows2.find((other) => other[0] === row[0]) ?? []).slice(1)])
          .sort((a, b) => Number(a[0]) - Number(b[0]));
        const text = [[...head1!, ...head2!.slice(1)], ...rows].map((row) => row.join(',')).join('\n');
        return { name: 'write_to_file', args: { file: 'output.csv', text: `${text}\n` } };
      },
      complete('combined'),
    ],
    expect: { 'output.csv': 'ID,Name,Occupation\n1,Alice,Engineer\n2,Bob,Doctor\n' },
  },
  {
    name: 'remember a fact from step 3 at step 20',
    goal: 'Remember the id in the instructions and write it to result.txt at the end',
    // A window all 20 steps fit in (8,192 tokens, the default, holds some 19 of them beside the
    // commands offered as tools): what recalls a step that no longer fits is memory's test, not this.
    flags: ['--context-tokens', '16384'],
    files: { 'instructions.txt': 'The id to remember is 2314. Do not write it down until the end.' },
    steps: [
      { name: 'search_files', args: { directory: '.' } },
      { name: 'write_to_file', args: { file: 'scratch/0.txt', text: 'start' } },
      { name: 'read_file', args: { file: 'instructions.txt' } },
      ...Array.from({ length: 16 }, (_, i): ReplayStep => ({
        name: 'write_to_file',
        args: { file: `scratch/${i + 1}.txt`, text: `busy work ${i + 1}` },
      })),
      (prompt) => {
        const id = /The id to remember is (\d+)/.exec(prompt)?.[1] ?? 'forgotten';
        return { name: 'write_to_file', args: { file: 'result.txt', text: id } };
      },
      complete('remembered'),
    ],
    expect: { 'result.txt': '2314' },
  },
];

describe.each<AnswerShape>(['json', 'tools'])('meta-agent run, answers as %s', (shape) => {
  it.each(TASKS)('passes the task: $name', async (task) => {
    server = await startReplayServer(task.steps, shape);
    const root = await workspace(task.files);
    const result = await run(
      ['--goal', task.goal, '--yes', '--answers', shape === 'tools' ? 'auto' : 'json', ...(task.flags ?? [])],
      root,
    );
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('ended: task_complete');
    for (const [file, text] of Object.entries(task.expect))
      expect(await readFile(join(root, file), 'utf8')).toBe(text);
    const offered = server.chatRequests()[0]!;
    if (shape === 'tools')
      expect(offered.tools?.map((tool) => tool.function.name)).toContain('write_to_file');
    else expect(offered.tools).toBeUndefined();
  });
});

describe('meta-agent run', () => {
  it('prints one line per step and a summary with steps, tokens and cost', async () => {
    server = await startReplayServer(TASKS[0]!.steps, 'json');
    const root = await workspace();
    const result = await run(['--goal', 'write it', '--yes'], root);
    expect(result.stdout).toMatch(
      /^step 1 · write_to_file \{"file":"output.txt","text":"Washington"\} → Wrote/m,
    );
    expect(result.stdout).toMatch(
      /ended: task_complete \(written\) · 2 of 50 steps · [\d,]+ tokens · \$0\.\d{4} · [\d.]+ s/,
    );
  });

  it('--json writes one JSON event a line, ending with goal.ended', async () => {
    server = await startReplayServer(TASKS[0]!.steps, 'json');
    const result = await run(['--goal', 'write it', '--yes', '--json'], await workspace());
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; reason?: string });
    expect(events.at(-1)).toMatchObject({ type: 'goal.ended', reason: 'task_complete' });
    expect(events.map((event) => event.type)).toContain('goal.result');
  });

  it('spends the budget on every model call of the run, a sub-agent’s included', async () => {
    server = await startReplayServer(
      [
        { name: 'start_agent', args: { name: 'pirate', task: 'pirate.autogram.json', prompt: 'Ahoy?' } },
        complete('asked'),
      ],
      'json',
    );
    const root = await workspace({
      'pirate.autogram.json': await readFile(
        new URL('../fixtures/tools/pirate.autogram.json', import.meta.url),
        'utf8',
      ),
    });
    const result = await run(['--goal', 'ask the pirate', '--yes', '--json'], root);
    expect(result.code).toBe(0);
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const calls = events.filter((event) => event.type === 'model.call') as Array<{
      purpose: string;
      usage: { promptTokens: number; completionTokens: number };
    }>;
    expect(calls.some((call) => !call.purpose.startsWith('goal step'))).toBe(true);
    const spent = calls.reduce((sum, call) => sum + call.usage.promptTokens + call.usage.completionTokens, 0);
    expect(events.at(-1)).toMatchObject({ type: 'goal.ended', tokens: spent });
  });

  it('falls back to JSON answers when the server refuses native tools', async () => {
    server = await startOpenAIServer({
      rejectTools: true,
      answers: [
        JSON.stringify({
          thoughts: { text: 'done' },
          command: { name: 'task_complete', args: { reason: 'nothing to do' } },
        }),
      ],
    });
    const result = await run(['--goal', 'nothing', '--yes'], await workspace());
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('ended: task_complete');
    expect(result.stdout).toMatch(/native tool calls/);
  });

  it('max_cost: stops before sending a call that could pass the budget', async () => {
    server = await startReplayServer(TASKS[0]!.steps, 'json');
    const result = await run(['--goal', 'write it', '--yes', '--max-cost', '0.00001'], await workspace());
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('ended: max_cost');
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('without a terminal nothing runs unless allowed: the run ends refused', async () => {
    const write = { name: 'write_to_file', args: { file: 'output.txt', text: 'Washington' } };
    server = await startReplayServer([write, write], 'json');
    const root = await workspace();
    const result = await run(['--goal', 'write it'], root);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('ended: refused');
    expect(result.stdout).toContain('--allow write_to_file');
    expect(await readdir(root)).toEqual(['.meta-agent']);
  });

  it('--allow lets the named command run without a terminal', async () => {
    server = await startReplayServer(TASKS[0]!.steps, 'json');
    const root = await workspace();
    const result = await run(['--goal', 'write it', '--allow', 'write_to_file'], root);
    expect(result.code).toBe(0);
    expect(await readFile(join(root, 'output.txt'), 'utf8')).toBe('Washington');
  });

  it('follows the allow rules remembered for the workspace', async () => {
    server = await startReplayServer(TASKS[0]!.steps, 'json');
    const root = await workspace();
    await rememberAllowRule(root, [], 'write_to_file', cliConfigDir);
    const result = await run(['--goal', 'write it'], root);
    expect(result.code).toBe(0);
    expect(await readFile(join(root, 'output.txt'), 'utf8')).toBe('Washington');
  });

  it('--continuous N runs N commands without asking, then ends at once where nobody can be asked', async () => {
    const write = (file: string): ReplayStep => ({ name: 'write_to_file', args: { file, text: file } });
    server = await startReplayServer(
      [write('a.txt'), write('b.txt'), write('c.txt'), write('d.txt')],
      'json',
    );
    const root = await workspace();
    const result = await run(['--goal', 'write four files', '--continuous', '2'], root);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('ended: continuous_limit (the 2 commands --continuous allowed have run');
    // No model call for a command that could not run: the two it answered are all it was asked.
    expect(server.chatRequests()).toHaveLength(2);
    expect(result.stdout).not.toContain('not run');
    expect((await readdir(root)).sort()).toEqual(['.meta-agent', 'a.txt', 'b.txt']);
  });

  it('refuses unknown --allow names and missing goals with exit code 2', async () => {
    server = await startReplayServer(TASKS[0]!.steps, 'json');
    const root = await workspace();
    const unknown = await run(['--goal', 'x', '--allow', 'write_file'], root);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('did you mean "write_to_file"');
    const none = await run([], root);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no goal given');
  });

  it('lets a run file kept outside its workspace choose no folder: --workspace must', async () => {
    server = await startReplayServer(TASKS[0]!.steps, 'json');
    const root = await workspace();
    await run(['--goal', 'write it', '--max-steps', '1', '--yes'], root);
    const moved = join(await workspace(), 'shared.run.json');
    await writeFile(moved, await readFile(await runFile(root), 'utf8'));
    const refused = await runCli(['run', '--resume', moved, '--base-url', server.url, '-m', 'gpt-4o-mini']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('pass --workspace DIR');
    const other = await workspace();
    const resumed = await runCli([
      'run',
      '--resume',
      moved,
      '--workspace',
      other,
      '--max-steps',
      '3',
      '--yes',
      '--base-url',
      server.url,
      '-m',
      'gpt-4o-mini',
    ]);
    expect(resumed.code).toBe(0);
    expect(await loadRunFile(moved)).toMatchObject({
      workspace: other,
      ended: { reason: 'task_complete' },
    });
  });

  it('after a max_steps end, says the command that raises --max-steps, and that command carries the run on', async () => {
    server = await startReplayServer(
      [
        { name: 'append_to_file', args: { file: 'log.txt', text: 'one\n' } },
        { name: 'append_to_file', args: { file: 'log.txt', text: 'two\n' } },
        complete('logged'),
      ],
      'json',
    );
    const root = await workspace();
    const first = await run(['--goal', 'log two lines', '--max-steps', '1', '--yes'], root);
    expect(first.stdout).toContain('ended: max_steps');
    const advised = /e\.g\. meta-agent run (--resume \S+ --max-steps 2)\n/.exec(first.stderr);
    expect(advised, first.stderr).not.toBeNull();
    const model = ['--yes', '--base-url', server.url, '--model', 'gpt-4o-mini'];
    const same = await runCli(['run', '--resume', await runFile(root), ...model]);
    expect(same.code).toBe(2);
    expect(same.stderr).toContain('ended at its step limit (1 of 1)');
    expect(same.stderr).toMatch(/hint: raise the limit: meta-agent run --resume \S+ --max-steps 2\n/);
    const raised = await runCli(['run', ...advised![1]!.split(' '), ...model]);
    expect(raised.stdout).toContain('step 2 · append_to_file');
    expect(await readFile(join(root, 'log.txt'), 'utf8')).toBe('one\ntwo\n');
    expect((await loadRunFile(await runFile(root))).ended?.reason).toBe('max_steps');
  });

  it('refuses a file that is not a run for --resume', async () => {
    server = await startReplayServer(TASKS[0]!.steps, 'json');
    const root = await workspace({ 'bad.json': '{"format": "meta-agent/run@1", "id": 5}' });
    const result = await runCli(['run', '--resume', join(root, 'bad.json')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/not a usable run file: id/);
  });
});

describe('meta-agent run after kill -9', () => {
  const LINES = 6;
  const steps: ReplayStep[] = [
    ...Array.from({ length: LINES }, (_, i): ReplayStep => ({
      name: 'append_to_file',
      args: { file: 'log.txt', text: `line ${i + 1}\n` },
    })),
    complete('logged'),
  ];
  /** Where in a step the process is killed, one after the other. */
  const MOMENTS = ['goal.step', 'goal.command', 'goal.authorized', 'goal.result', 'goal.spend'];

  it('resumes at every step and never appends a line twice', async () => {
    // Each answer takes a while, so a kill sent at a step lands before the run can finish, even when the
    // test itself is slow to read the CLI's output on a busy machine.
    server = await startReplayServer(steps, 'json', { latencyMs: 150 });
    const root = await workspace();
    const args = ['--yes', '--json', '--base-url', server.url, '--model', 'gpt-4o-mini'];
    const first = await runCli(['run', '--goal', 'log six lines', '--workspace', root, ...args], {
      killWhen: killAt(1, MOMENTS[0]!),
    });
    const outcomes = [first.signal ?? first.code];
    for (let step = 2; step <= LINES && outcomes.at(-1) === 'SIGKILL'; step++) {
      const result = await runCli(['run', '--resume', await runFile(root), ...args], {
        killWhen: killAt(step, MOMENTS[(step - 1) % MOMENTS.length]!),
      });
      outcomes.push(result.signal ?? result.code);
    }
    if (outcomes.at(-1) === 'SIGKILL') {
      const last = await runCli(['run', '--resume', await runFile(root), ...args]);
      outcomes.push(last.code);
    }
    expect(outcomes.filter((outcome) => outcome === 'SIGKILL').length).toBeGreaterThanOrEqual(4);
    expect(outcomes.at(-1)).toBe(0);
    const lines = (await readFile(join(root, 'log.txt'), 'utf8')).trim().split('\n');
    expect(new Set(lines).size).toBe(lines.length);
    expect(lines.length).toBeGreaterThanOrEqual(LINES - 2);
    const saved = await loadRunFile(await runFile(root));
    expect(saved.ended?.reason).toBe('task_complete');
  });

  function killAt(step: number, type: string): (stderr: string, stdout: string) => boolean {
    return (_stderr, stdout) =>
      stdout
        .split('\n')
        .some((line) => line.startsWith(`{"type":"${type}"`) && line.includes(`"step":${step}`));
  }
});
