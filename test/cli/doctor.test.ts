import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { closedUrl, startOpenAIServer } from '../support/openai-server.js';
import type { ChatRequestBody, OpenAIServer } from '../support/openai-server.js';
import { runCli } from '../support/run-cli.js';

let server: OpenAIServer | undefined;

/** Answers as a model that knows its colours: the letter the question gives "blue". */
function letterOfBlue(body: ChatRequestBody): string {
  const question = body.messages.at(-1)?.content ?? '';
  return /^([A-Z])\. blue$/m.exec(question)?.[1] ?? 'I do not know';
}

/** The report's line for the check `name` (the first, when there are several). */
function lineOf(stdout: string, name: string): string | undefined {
  return stdout.split('\n').find((line) => new RegExp(`^\\w+\\s+${name}\\s`).test(line));
}

afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('meta-agent doctor', () => {
  it('passes every check against a working server, including a one-token classification', async () => {
    server = await startOpenAIServer({
      models: ['gpt-4o-mini', 'text-embedding-3-small'],
      reply: letterOfBlue,
    });
    const result = await runCli(['doctor', '--base-url', server.url]);
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines.every((line) => line.startsWith('ok '))).toBe(true);
    for (const name of [
      'node',
      'sandbox',
      'python',
      'graphviz',
      'chatbot',
      'classifier',
      'endpoint',
      'classify',
    ]) {
      expect(result.stdout).toMatch(new RegExp(`^ok\\s+${name}\\s`, 'm'));
    }
    expect(result.stdout).toContain(
      `${server.url} answered with 2 models: gpt-4o-mini, text-embedding-3-small`,
    );
    expect(result.stdout).toContain(
      'gpt-4o-mini answered B (blue), then A (blue) with the choices reordered (1 try each); logit_bias on',
    );
    const classifications = server.chatRequests();
    expect(classifications).toHaveLength(2);
    for (const classification of classifications) {
      expect(classification).toMatchObject({ model: 'gpt-4o-mini', max_tokens: 1, temperature: 0 });
    }
  });

  it('fails with exit 1 and one clear line when nothing listens at the URL', async () => {
    const url = await closedUrl();
    const result = await runCli(['doctor', '--base-url', url, '--model', 'llama3.2']);
    expect(result.code).toBe(1);
    const failures = result.stdout.split('\n').filter((line) => line.startsWith('fail'));
    expect(failures).toEqual([
      `fail  endpoint    no model server answered at ${url} — fix: start the model server meant to listen on port ${new URL(url).port}, or point OPENAI_BASE_URL or --base-url at a server that runs`,
    ]);
    expect(result.stdout).toMatch(/^skip\s+classify\s+not tried/m);
    expect(result.stderr).not.toMatch(/\bat .*\.js:\d+/);
  });

  it('exits 2 naming OPENAI_API_KEY and OPENAI_BASE_URL when no server is configured under --provider openai', async () => {
    const url = await closedUrl();
    const result = await runCli(['doctor', '--provider', 'openai'], { env: { META_AGENT_PROBE_URLS: url } });
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
      await writeFile(script, JSON.stringify({ rules: [{ role: 'classifier', reply: ['B', 'A'] }] }));
      const result = await runCli(['doctor', '--provider', 'scripted', '--script', script]);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`ok    models      scripted answers from ${script}; no server`);
      expect(result.stdout).toContain(
        'ok    classify    scripted answered B (blue), then A (blue) with the choices reordered (1 try each); scripted',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
  it('fails a classifier that answers wrongly, saying what it answered and what was expected', async () => {
    server = await startOpenAIServer({ defaultAnswer: 'C' });
    const result = await runCli(['doctor', '--base-url', server.url]);
    expect(result.code).toBe(1);
    expect(lineOf(result.stdout, 'classify')).toBe(
      'fail  classify    gpt-4o-mini answered "Which of these is a colour?" with C (Tuesday), then C (seven) ' +
        'with the choices reordered; expected blue both times — fix: the model may be too small, or ' +
        'misconfigured (its chat template), to classify, and would choose transitions wrongly; try another ' +
        'with --classifier-model, -m or META_AGENT_CLASSIFIER_MODEL',
    );
  });

  it('does not pass a classifier that always gives the same letter, though it is right the first time', async () => {
    server = await startOpenAIServer({ defaultAnswer: 'B' });
    const result = await runCli(['doctor', '--base-url', server.url]);
    expect(result.code).toBe(1);
    expect(lineOf(result.stdout, 'classify')).toMatch(
      /^fail\s+classify\s+gpt-4o-mini answered .* with B \(blue\), then B \(Tuesday\) with the choices reordered; expected blue both times/,
    );
  });

  it('waits for a slow model list as long as META_AGENT_TIMEOUT_MS allows', async () => {
    // Longer than the 5 s doctor waits when the variable is not set.
    server = await startOpenAIServer({ modelsDelayMs: 6_000, reply: letterOfBlue });
    const result = await runCli(['doctor', '--base-url', server.url, '--model', 'gpt-4o-mini'], {
      env: { META_AGENT_TIMEOUT_MS: '30000' },
    });
    expect(result.code).toBe(0);
    expect(lineOf(result.stdout, 'endpoint')).toMatch(/^ok\s+endpoint\s+.* answered with 2 models/);
    expect(lineOf(result.stdout, 'classify')).toMatch(/^ok\s/);
  });

  it('gives up on a model list slower than a small META_AGENT_TIMEOUT_MS, naming the variable', async () => {
    server = await startOpenAIServer({ modelsDelayMs: 10_000 });
    const result = await runCli(['doctor', '--base-url', server.url, '--model', 'gpt-4o-mini'], {
      env: { META_AGENT_TIMEOUT_MS: '300' },
    });
    expect(result.code).toBe(1);
    expect(lineOf(result.stdout, 'endpoint')).toBe(
      `fail  endpoint    the model server at ${server.url} did not answer within 0.3 s — fix: META_AGENT_TIMEOUT_MS is 300: raise it if the server is only slow`,
    );
    expect(lineOf(result.stdout, 'classify')).toMatch(/^skip\s+classify\s+not tried/);
  });

  it('refuses a META_AGENT_TIMEOUT_MS that is not a number of milliseconds, with exit 2', async () => {
    const result = await runCli(['doctor', '--base-url', await closedUrl()], {
      env: { META_AGENT_TIMEOUT_MS: 'soon' },
    });
    expect(result.code).toBe(2);
    expect(lineOf(result.stdout, 'timeout')).toBe(
      'fail  timeout     META_AGENT_TIMEOUT_MS must be a positive number of milliseconds, not "soon" — fix: for example META_AGENT_TIMEOUT_MS=120000 for two minutes',
    );
  });

  it('advises checking the network, not starting a local server, when a remote server is unreachable', async () => {
    // The reserved .invalid domain never resolves, so this fails at once without touching the network.
    const url = 'https://api.openai.com.invalid/v1';
    const result = await runCli(['doctor', '--base-url', url, '--model', 'gpt-4o-mini']);
    expect(result.code).toBe(1);
    expect(lineOf(result.stdout, 'endpoint')).toBe(
      `fail  endpoint    no model server answered at ${url} — fix: check the URL, and that this machine can reach api.openai.com.invalid (network, VPN, proxy, firewall)`,
    );
    expect(result.stdout).not.toMatch(/ollama|start the/i);
  });

  it('fails a server that lists no models and skips the classification, unless a model is named', async () => {
    server = await startOpenAIServer({ models: [], reply: letterOfBlue });
    const unnamed = await runCli(['doctor', '--base-url', server.url]);
    expect(unnamed.code).toBe(1);
    expect(lineOf(unnamed.stdout, 'endpoint')).toBe(
      `fail  endpoint    ${server.url} answered, but lists no models — fix: load or pull a model into the server ` +
        '(Ollama: `ollama pull llama3.2`; LM Studio: load one in the app), or name a model with --model',
    );
    expect(lineOf(unnamed.stdout, 'classify')).toBe(
      `skip  classify    not tried: ${server.url} lists no model to ask; name one with --classifier-model or -m to try it anyway`,
    );
    expect(server.chatRequests()).toEqual([]);

    const named = await runCli(['doctor', '--base-url', server.url, '--model', 'llama3.2']);
    expect(named.code).toBe(0);
    expect(lineOf(named.stdout, 'endpoint')).toMatch(
      /^warn\s+endpoint\s+.* answered, but lists no models, not even llama3\.2, which was named — fix: /,
    );
    expect(lineOf(named.stdout, 'classify')).toMatch(
      /^ok\s+classify\s+llama3\.2 answered B \(blue\), then A \(blue\)/,
    );
  });
});
