/**
 * clone_repository through `meta-agent run`, a loopback model choosing it, against a real git server on
 * loopback (git http-backend): refused without --allow-private-network, cloned with it.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startGitServer, type GitServer } from '../support/git-server.js';
import type { OpenAIServer } from '../support/openai-server.js';
import { startReplayServer, type ReplayStep } from '../support/replay-server.js';
import { runCli } from '../support/run-cli.js';

let git: GitServer;
let model: OpenAIServer | undefined;
beforeAll(async () => {
  git = await startGitServer({ 'notes.git': { 'README.md': '# Notes\nThe answer is 42.\n' } });
});
afterAll(() => git.close());
afterEach(async () => {
  await model?.close();
  model = undefined;
});

async function run(flags: string[], steps: ReplayStep[]) {
  model = await startReplayServer(steps, 'json');
  const root = await mkdtemp(join(tmpdir(), 'run-clone-'));
  const result = await runCli([
    ...['run', '--goal', 'clone the notes and read them', '--yes', '--no-memory', ...flags],
    ...['--workspace', root, '--base-url', model.url, '--model', 'gpt-4o-mini'],
  ]);
  return { root, result };
}

describe('meta-agent run: clone_repository', () => {
  // By name, not address: git must connect to the address that was checked.
  const url = () => `${git.url.replace('127.0.0.1', 'localhost')}/notes.git`;
  const steps = (): ReplayStep[] => [
    { name: 'clone_repository', args: { repository_url: url(), clone_path: 'notes' } },
    { name: 'read_file', args: { file: 'notes/README.md' } },
    { name: 'task_complete', args: { reason: 'read' } },
  ];

  it('clones from a loopback server when the run allows private addresses', async () => {
    const { root, result } = await run(['--allow-private-network'], steps());
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^step 1 · clone_repository .* → Cloned http:\/\/localhost:\d+\/notes\.git into notes/m,
    );
    expect(await readFile(join(root, 'notes/README.md'), 'utf8')).toBe('# Notes\nThe answer is 42.\n');
    const prompts = model!.chatRequests().map((body) => body.messages.map((m) => m.content).join('\n'));
    expect(prompts[2]).toContain('The answer is 42.');
  });

  it('refuses a loopback server otherwise, and the model is told why', async () => {
    const before = git.requests.length;
    const { root, result } = await run([], steps());
    expect(git.requests.length).toBe(before);
    await expect(readFile(join(root, 'notes/README.md'), 'utf8')).rejects.toThrow(/ENOENT/);
    expect(result.stdout).toMatch(/localhost resolves to (127\.0\.0\.1|::1), a private or local address/);
  });
});
