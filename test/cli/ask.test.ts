import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startOpenAIServer } from '../support/openai-server.js';
import type { OpenAIServer } from '../support/openai-server.js';
import { runCli } from '../support/run-cli.js';

let server: OpenAIServer | undefined;
let dir: string | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('meta-agent ask', () => {
  it('streams the server answer to stdout and the usage to stderr', async () => {
    server = await startOpenAIServer({
      answers: [{ text: 'Bonjour tout le monde', usage: { promptTokens: 12, completionTokens: 5 } }],
    });
    const result = await runCli([
      'ask',
      'Say hello in French',
      '--base-url',
      server.url,
      '--model',
      'gpt-4o-mini',
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('Bonjour tout le monde\n');
    expect(result.stderr).toMatch(
      /^gpt-4o-mini · 1 call · 12 in \/ 5 out tokens · <\$0\.0001 · \d+\.\d s\n$/,
    );
    const [request] = server.chatRequests();
    expect(request).toMatchObject({
      stream: true,
      messages: [{ role: 'user', content: 'Say hello in French' }],
    });
  });

  it('sends --system before the message', async () => {
    server = await startOpenAIServer({ answers: ['Arr!'] });
    const result = await runCli(['ask', 'Hi', '--system', 'Talk like a pirate.', '--model', 'llama3.2'], {
      env: { OPENAI_BASE_URL: server.url },
    });
    expect(result.stdout).toBe('Arr!\n');
    expect(result.stderr).toContain('· local ·');
    expect(server.chatRequests()[0]?.messages).toEqual([
      { role: 'system', content: 'Talk like a pirate.' },
      { role: 'user', content: 'Hi' },
    ]);
  });

  it('marks scripted answers as scripted', async () => {
    dir = await mkdtemp(join(tmpdir(), 'meta-agent-ask-'));
    const script = join(dir, 'rules.json');
    await writeFile(script, JSON.stringify({ rules: [{ match: 'hello', reply: 'Hi from the script.' }] }));
    const result = await runCli(['ask', 'hello there', '--provider', 'scripted', '--script', script]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('[scripted] Hi from the script.\n');
    expect(result.stderr).toMatch(/^\[scripted\] scripted · 1 call/);
  });

  it('prints one error line and a hint, no stack, when the model is unknown', async () => {
    server = await startOpenAIServer({ rejectUnknownModels: true, models: ['llama3.2'] });
    const result = await runCli(['ask', 'hi', '--base-url', server.url, '--model', 'gpt-99']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `error: model "gpt-99" is not available at ${server.url} (404: unknown model, or the base URL lacks /v1)\n` +
        'hint: run `meta-agent doctor` to list the models the server offers, then pass --model\n',
    );
  });

  it('gives up on a slow server after META_AGENT_TIMEOUT_MS and its retries, in one line', async () => {
    server = await startOpenAIServer({ latencyMs: 3_000 });
    const result = await runCli(['ask', 'hi', '--model', 'llama3.2'], {
      env: { OPENAI_BASE_URL: server.url, META_AGENT_TIMEOUT_MS: '150' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr.split('\n')[0]).toBe(
      `error: the model server at ${server.url} did not answer within 0.1 s after 2 retries`,
    );
    expect(server.chatRequests()).toHaveLength(3);
  });

  it('waits for the model list, when no model is named, as long as META_AGENT_TIMEOUT_MS says', async () => {
    server = await startOpenAIServer({ modelsDelayMs: 3_000 });
    const result = await runCli(['ask', 'hi'], {
      env: { OPENAI_BASE_URL: server.url, META_AGENT_TIMEOUT_MS: '150' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr.split('\n')).toEqual([
      `error: the model server at ${server.url} did not answer within 0.1 s`,
      'hint: raise META_AGENT_TIMEOUT_MS (milliseconds) or use a smaller or less busy model',
      '',
    ]);
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('rejects a META_AGENT_TIMEOUT_MS that is not a positive number as a usage error', async () => {
    server = await startOpenAIServer();
    const result = await runCli(['ask', 'hi', '--model', 'llama3.2'], {
      env: { OPENAI_BASE_URL: server.url, META_AGENT_TIMEOUT_MS: 'soon' },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'META_AGENT_TIMEOUT_MS must be a positive number of milliseconds, not "soon"',
    );
  });
});
