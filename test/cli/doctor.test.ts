import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { closedUrl, startOpenAIServer } from '../support/openai-server.js';
import type { OpenAIServer } from '../support/openai-server.js';
import { runCli } from '../support/run-cli.js';

let server: OpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('meta-agent doctor', () => {
  it('passes every check against a working server, including a one-token classification', async () => {
    server = await startOpenAIServer({ models: ['gpt-4o-mini', 'text-embedding-3-small'], answers: ['B'] });
    const result = await runCli(['doctor', '--base-url', server.url]);
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines.every((line) => line.startsWith('ok '))).toBe(true);
    for (const name of ['node', 'sandbox', 'graphviz', 'chatbot', 'classifier', 'endpoint', 'classify']) {
      expect(result.stdout).toMatch(new RegExp(`^ok\\s+${name}\\s`, 'm'));
    }
    expect(result.stdout).toContain(
      `${server.url} answered with 2 models: gpt-4o-mini, text-embedding-3-small`,
    );
    expect(result.stdout).toContain('gpt-4o-mini answered B (blue) in 1 try; logit_bias on');
    const classification = server.chatRequests().at(-1);
    expect(classification).toMatchObject({ model: 'gpt-4o-mini', max_tokens: 1, temperature: 0 });
  });

  it('fails with exit 1 and one clear line when nothing listens at the URL', async () => {
    const url = await closedUrl();
    const result = await runCli(['doctor', '--base-url', url, '--model', 'llama3.2']);
    expect(result.code).toBe(1);
    const failures = result.stdout.split('\n').filter((line) => line.startsWith('fail'));
    expect(failures).toEqual([
      `fail  endpoint    no model server answered at ${url} — fix: start the server (for example \`ollama serve\`), or point OPENAI_BASE_URL or --base-url at one that runs`,
    ]);
    expect(result.stdout).toMatch(/^skip\s+classify\s+not tried/m);
    expect(result.stderr).not.toMatch(/\bat .*\.js:\d+/);
  });

  it('exits 2 naming OPENAI_API_KEY and OPENAI_BASE_URL when nothing is configured', async () => {
    const url = await closedUrl();
    const result = await runCli(['doctor'], { env: { META_AGENT_PROBE_URLS: url } });
    expect(result.code).toBe(2);
    const failure = result.stdout.split('\n').find((line) => line.startsWith('fail'));
    expect(failure).toContain('OPENAI_API_KEY');
    expect(failure).toContain('OPENAI_BASE_URL');
    expect(failure).toContain('--base-url');
  });

  it('reports a rejected key as a failed endpoint check', async () => {
    server = await startOpenAIServer({ apiKey: 'sk-right' });
    const result = await runCli(['doctor', '--model', 'gpt-4o-mini'], {
      env: { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: 'sk-wrong' },
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      `fail  endpoint    the model server at ${server.url} rejected the API key (401)`,
    );
  });

  it('says when a classifier cannot produce a usable answer', async () => {
    server = await startOpenAIServer({
      models: ['llama3.2'],
      ignoreLogitBias: true,
      defaultAnswer: 'Well...',
    });
    const result = await runCli(['doctor', '--base-url', server.url]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /^fail\s+classify\s+classifier question "Which of these is a colour\?": no usable answer after 3 tries/m,
    );
  });

  it('checks a scripted setup without any server', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'meta-agent-doctor-'));
    try {
      const script = join(dir, 'rules.json');
      await writeFile(script, JSON.stringify({ rules: [{ role: 'classifier', reply: 'B' }] }));
      const result = await runCli(['doctor', '--provider', 'scripted', '--script', script]);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`ok    models      scripted answers from ${script}; no server`);
      expect(result.stdout).toContain('ok    classify    scripted answered B (blue) in 1 try; scripted');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
