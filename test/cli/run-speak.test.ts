/**
 * Speak mode (`run --speak`) end to end: the built CLI, a loopback model whose steps each carry a
 * speak thought, and the voices a machine may have, put on the CLI's PATH as small programs that keep
 * what they were given: an audio player for the model server's speech endpoint, a speech program, or
 * neither.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { OpenAIServer } from '../support/openai-server.js';
import { startReplayServer, type ReplayStep } from '../support/replay-server.js';
import { runCli, type CliResult } from '../support/run-cli.js';

let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The replay server says `Running <command>.` as each step's speak thought. */
const STEPS: ReplayStep[] = [
  { name: 'write_to_file', args: { file: 'a.txt', text: 'a' } },
  { name: 'task_complete', args: { reason: 'written' } },
];

/** One WAV's worth of bytes, as the speech endpoint answers. */
const WAV = Buffer.from('RIFF\u0024\0\0\0WAVEfmt speech;');

/**
 * A folder for PATH holding `programs`: shell scripts that append what they got to `log` (a player the
 * file it plays, a speech program its standard input), so the test sees what was said.
 */
async function pathWith(
  programs: Record<string, 'plays-file' | 'reads-stdin'>,
): Promise<{ bin: string; log: string }> {
  const bin = await mkdtemp(join(tmpdir(), 'speak-bin-'));
  const log = join(bin, 'said.log');
  await writeFile(log, '');
  for (const [name, kind] of Object.entries(programs)) {
    const body =
      kind === 'plays-file'
        ? `for last; do :; done\n/bin/cat "$last" >> '${log}'\necho >> '${log}'\n`
        : `/bin/cat >> '${log}'\necho >> '${log}'\n`;
    await writeFile(join(bin, name), `#!/bin/sh\n${body}`, { mode: 0o755 });
  }
  return { bin, log };
}

async function run(bin: string, extra: string[] = []): Promise<CliResult> {
  const root = await mkdtemp(join(tmpdir(), 'speak-ws-'));
  return runCli(['run', '--goal', 'write a.txt', '--yes', '--speak', '--workspace', root, ...extra], {
    env: { PATH: bin },
  });
}

const speechRequests = () => server!.requests.filter((request) => request.path === '/v1/audio/speech');

describe('run --speak', () => {
  it("sends each step's speak thought to the speech endpoint and plays what comes back", async () => {
    server = await startReplayServer(STEPS, 'json', { media: { speech: WAV } });
    const { bin, log } = await pathWith({ aplay: 'plays-file' });
    const result = await run(bin, ['--base-url', server.url, '--model', 'gpt-4o-mini']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      "speech warning: speak mode: each step's speak thought is said through the model server's speech endpoint, played by aplay",
    );
    expect(speechRequests().map((request) => request.body)).toEqual([
      { model: 'tts-1', input: 'Running write_to_file.', voice: 'alloy', response_format: 'wav' },
      { model: 'tts-1', input: 'Running task_complete.', voice: 'alloy', response_format: 'wav' },
    ]);
    expect(await readFile(log, 'utf8')).toBe(`${WAV.toString()}\n${WAV.toString()}\n`);
  });

  it('hands over to a speech program when the model server has no speech endpoint', async () => {
    server = await startReplayServer(STEPS, 'json');
    const { bin, log } = await pathWith({ aplay: 'plays-file', 'espeak-ng': 'reads-stdin' });
    const result = await run(bin, ['--base-url', server.url, '--model', 'gpt-4o-mini']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      `speech failed (the model server at ${server.url} has no /audio/speech endpoint (404): it cannot speak); speak mode goes on through espeak-ng`,
    );
    expect(speechRequests()).toHaveLength(1);
    expect(await readFile(log, 'utf8')).toBe('Running write_to_file.\nRunning task_complete.\n');
  });

  it('says it is silent where there is neither a speech endpoint nor a speech program, and runs on', async () => {
    const root = await mkdtemp(join(tmpdir(), 'speak-ws-'));
    const script = join(root, 'run.script.json');
    await writeFile(
      script,
      JSON.stringify({
        rules: [
          {
            reply: JSON.stringify({
              thoughts: { text: 'done', speak: 'All done.' },
              command: { name: 'task_complete', args: { reason: 'nothing to do' } },
            }),
          },
        ],
      }),
    );
    const { bin } = await pathWith({});
    const result = await runCli(
      [
        'run',
        '--goal',
        'nothing',
        '--yes',
        '--speak',
        '--workspace',
        root,
        '--provider',
        'scripted',
        '--script',
        script,
      ],
      { env: { PATH: bin } },
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      'speech warning: speak mode is silent: no speech endpoint (the model is not on an OpenAI-compatible server) and no speech program (espeak-ng, espeak, say, spd-say)\n',
    );
    expect(result.stdout).toContain('ended: task_complete');
  });
});
