/**
 * `ai_settings.yaml` in `meta-agent run`, as AutoGPT 0.2.x users know it: a run keeps its name, role
 * and goals in its workspace, `--ai-settings FILE` starts one from such a file, and without a terminal
 * the last settings are never taken unasked. The built CLI against a loopback OpenAI-compatible server.
 * (The offer at the next start in a terminal: test/e2e/goal-tmux.test.ts.)
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { OpenAIServer } from '../support/openai-server.js';
import { promptText, startReplayServer } from '../support/replay-server.js';
import { runCli, type CliResult } from '../support/run-cli.js';

let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const WRITE_POEM = [
  { name: 'write_to_file', args: { file: 'poem.txt', text: 'roses' } },
  { name: 'task_complete', args: { reason: 'written' } },
];

/** `meta-agent run ARGS` in `dir`, its workspace `dir/ws`, against the loopback server. */
function run(args: string[], dir: string): Promise<CliResult> {
  return runCli(
    ['run', ...args, '--workspace', 'ws', '--base-url', server!.url, '--model', 'gpt-4o-mini', '--no-memory'],
    { cwd: dir },
  );
}

describe('meta-agent run and ai_settings.yaml', () => {
  it('keeps the name, role and goals in the workspace, in AutoGPT’s layout', async () => {
    server = await startReplayServer(WRITE_POEM, 'json');
    const dir = await mkdtemp(join(tmpdir(), 'run-settings-'));
    const args = [
      '--name',
      'Poet',
      '--role',
      'an AI that writes poems',
      '--goal',
      'write a poem to poem.txt',
    ];
    const result = await run([...args, '--goal', 'shut down', '--yes'], dir);
    expect(result.code, result.stderr).toBe(0);
    const kept = parse(await readFile(join(dir, 'ws/.meta-agent/ai_settings.yaml'), 'utf8')) as unknown;
    expect(kept).toEqual({
      ai_name: 'Poet',
      ai_role: 'an AI that writes poems',
      ai_goals: ['write a poem to poem.txt', 'shut down'],
    });
  });

  it('--ai-settings FILE runs with its name, role and goals: the model is given them', async () => {
    server = await startReplayServer(WRITE_POEM, 'json');
    const dir = await mkdtemp(join(tmpdir(), 'run-settings-'));
    await writeFile(
      join(dir, 'ai_settings.yaml'),
      'ai_goals:\n- Write a poem about roses to poem.txt\n- Shut down when you are done\n' +
        'ai_name: RoseGPT\nai_role: an AI that writes poems about flowers\n',
    );
    const result = await run(['--ai-settings', 'ai_settings.yaml', '--yes'], dir);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('[run] name, role and 2 goal(s) from ai_settings.yaml: RoseGPT');
    const prompt = promptText(server.chatRequests()[0]!);
    expect(prompt).toContain('You are RoseGPT, an AI that writes poems about flowers');
    expect(prompt).toContain('1. Write a poem about roses to poem.txt\n2. Shut down when you are done');
    expect(await readFile(join(dir, 'ws/poem.txt'), 'utf8')).toBe('roses');
  });

  it('refuses a settings file that holds no settings in one line, and asks the model nothing', async () => {
    server = await startReplayServer(WRITE_POEM, 'json');
    const dir = await mkdtemp(join(tmpdir(), 'run-settings-'));
    const files: Record<string, [string, string]> = {
      'broken.yaml': ['ai_name: [Poet\n', 'not YAML: '],
      'six.yaml': [
        `ai_name: Poet\nai_role: poet\nai_goals: [a, b, c, d, e, f]\n`,
        'ai_goals: at most 5 goals',
      ],
      'no-role.yaml': ['ai_name: Poet\nai_goals: [a]\n', 'ai_role: missing'],
      'escape.yaml': [
        'ai_name: Poet\nai_role: poet\nai_goals: ["clear\\u001b[2Jthe screen"]\n',
        'ai_goals.0: one line, without control characters',
      ],
      'list.yaml': ['- ai_name: Poet\n', 'not a mapping with ai_name, ai_role and ai_goals'],
      'huge.yaml': [
        `ai_name: Poet\nai_role: ${'x'.repeat(70_000)}\n`,
        '70024 bytes; a settings file holds at most 65536',
      ],
    };
    for (const [file, [text]] of Object.entries(files)) await writeFile(join(dir, file), text);
    for (const [file, [, problem]] of [
      ...Object.entries(files),
      ['missing.yaml', ['', 'no such file']] as const,
    ]) {
      const result = await run(['--ai-settings', file, '--yes'], dir);
      expect(result.code, file).toBe(2);
      expect(result.stderr).toContain(`error: --ai-settings ${file}: ${problem}`);
      expect(result.stderr).toMatch(
        /^error: [^\n]+\nhint: give a YAML file with ai_name, ai_role and ai_goals[^\n]+\n$/,
      );
    }
    const mixed = await run(['--ai-settings', 'six.yaml', '--goal', 'another'], dir);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toContain('error: --ai-settings gives the name, role and goals');
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('never takes the last settings unasked without a terminal: the hint names the file to pass', async () => {
    server = await startReplayServer(WRITE_POEM, 'json');
    const dir = await mkdtemp(join(tmpdir(), 'run-settings-'));
    expect((await run(['--goal', 'write a poem to poem.txt', '--yes'], dir)).code).toBe(0);
    const asked = server.chatRequests().length;
    const again = await run(['--yes'], dir);
    expect(again.code).toBe(2);
    expect(again.stderr).toBe(
      'error: no goal given\nhint: pass --goal "…" (up to 5), or go on with the last settings (read them first): --ai-settings ws/.meta-agent/ai_settings.yaml\n',
    );
    expect(server.chatRequests()).toHaveLength(asked);
    // The file the hint names is the way on.
    const named = await run(['--ai-settings', 'ws/.meta-agent/ai_settings.yaml', '--yes'], dir);
    expect(named.code, named.stderr).toBe(0);
    expect(promptText(server.chatRequests()[asked]!)).toContain('1. write a poem to poem.txt');
  });
});
