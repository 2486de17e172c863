/**
 * The embedded model from the command line, as a user with no model server meets it: the built CLI as
 * a subprocess, the real runtime, and a fake Hugging Face hub on loopback serving the tiny GGUF the
 * tests write in place of the default model. ITS WEIGHTS ARE RANDOM: what it says is noise, so these
 * tests check what the user is told, what is fetched, and where each role's calls go.
 */
import { readFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { preparedOnFirstCall } from '../../src/cli/local-setup.js';
import { UserError } from '../../src/errors.js';
import { resolveModels } from '../../src/llm/config.js';
import { DEFAULT_LOCAL_MODEL, parseModelRef } from '../../src/llm/local/model-ref.js';
import { startFakeHub, type FakeHub } from '../support/fake-hub.js';
import { ensureTestRuntime, localTestEnv, tinyModelFile } from '../support/local-runtime.js';
import { closedUrl, startOpenAIServer, type OpenAIServer } from '../support/openai-server.js';
import { runCli } from '../support/run-cli.js';

const GREETER = 'test/fixtures/cli/greeter.autogram.json';
let tiny: string;
let hub: FakeHub | undefined;
let server: OpenAIServer | undefined;

beforeAll(async () => {
  await ensureTestRuntime();
  tiny = tinyModelFile();
}, 120_000);

afterEach(async () => {
  await hub?.close();
  await server?.close();
  hub = server = undefined;
});

/** A hub that serves the tiny model under the default model's name. */
async function hubWithDefaultModel(): Promise<FakeHub> {
  const ref = parseModelRef(DEFAULT_LOCAL_MODEL.ref);
  if (ref.kind !== 'hf') throw new Error('the default model is not on the hub');
  return startFakeHub({ files: [{ repo: ref.repo, file: ref.file, content: readFileSync(tiny) }] });
}

describe('the embedded model from the command line (random weights: the path, not the answers)', () => {
  it('answers with no server at all: the first run says what it fetches and where, the next fetches nothing', async () => {
    hub = await hubWithDefaultModel();
    const env = localTestEnv({ HF_ENDPOINT: hub.url, META_AGENT_PROBE_URLS: await closedUrl() });
    const first = await runCli(['ask', 'hello'], { env });
    expect(first.stderr).toContain(
      `[models] no model server is configured or answering, so meta-agent runs the embedded model ${DEFAULT_LOCAL_MODEL.ref}. First use downloads it (about 1.1 GB) into ${env.META_AGENT_CACHE_DIR}/models, once`,
    );
    expect(first.stderr).toContain('[models] to use a model server instead, set OPENAI_API_KEY');
    expect(first.stderr).toMatch(/downloading hf:Qwen\/.*100%/);
    expect(first.code).toBe(0);
    const downloads = hub.count('GET', '/cdn/');
    expect(downloads).toBe(1);

    const second = await runCli(['ask', 'hello again'], { env });
    expect(second.code).toBe(0);
    expect(second.stderr.split('\n')[0]).toBe(
      `[models] no model server is configured or answering, so the embedded model ${DEFAULT_LOCAL_MODEL.ref} answers`,
    );
    expect(second.stderr).not.toContain('downloading');
    expect(hub.count('GET', '/cdn/')).toBe(downloads);
  });

  it('fetches it in a chat only when a node first needs a model', async () => {
    hub = await hubWithDefaultModel();
    const env = localTestEnv({ HF_ENDPOINT: hub.url, META_AGENT_PROBE_URLS: await closedUrl() });
    const noModel = await runCli(['chat', 'test/fixtures/engine/tally.autogram.json'], {
      input: 'a\nb\n',
      env,
    });
    expect(noModel.code).toBe(0);
    expect(noModel.stderr).toBe('');
    expect(hub.requests).toEqual([]);

    const result = await runCli(['chat', GREETER], { input: 'Ada\n', env });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('First use downloads it (about 1.1 GB)');
    expect(hub.count('GET', '/cdn/')).toBe(1);
  });

  it('in the full-screen view, says how to fetch it rather than draw a download under the view', async () => {
    const resolved = await resolveModels({ env: { META_AGENT_PROBE_URLS: await closedUrl() } });
    const lazy = preparedOnFirstCall(resolved, false);
    const call = lazy.chatbot.complete({ messages: [{ role: 'user', content: 'hi' }] });
    await expect(call).rejects.toBeInstanceOf(UserError);
    await expect(call).rejects.toThrow(
      'is not downloaded yet, and the full-screen view cannot show its download',
    );
    const error = (await call.catch((caught: unknown) => caught)) as UserError;
    expect(error.hint).toMatch(
      /^`meta-agent models pull` fetches it \(about 1\.1 GB\), as does running once with --no-tui/,
    );
  });

  it('fails offline in the one line the README promises, and its hint', async () => {
    const result = await runCli(['design', 'a tutor bot', '-o', tinyModelFile().replace(/tiny\.gguf$/, '')], {
      env: localTestEnv({ META_AGENT_PROBE_URLS: await closedUrl() }),
    });
    expect(result.code).toBe(2);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^error: cannot download hf:\S+: 127\.0\.0\.1:9 cannot be reached, and the model is not in the cache/,
    );
    expect(lines[1]).toMatch(/^hint: .*--model local:PATH, or use a model server \(--base-url URL\)$/);
    expect(lines).toHaveLength(2);
  });

  it('doctor fails offline, with the advice the first run ends with, when nothing can answer', async () => {
    const result = await runCli(['doctor'], {
      env: localTestEnv({ META_AGENT_PROBE_URLS: await closedUrl() }),
    });
    expect(result.stdout).toMatch(
      /^fail {2}model {7}cannot download hf:\S+: 127\.0\.0\.1:9 cannot be reached, and the model is not in the cache .* — fix: .*--model local:PATH, or use a model server \(--base-url URL\)$/m,
    );
    expect(result.code).toBe(1);
  });

  it('doctor warns, and passes, where the hub has the model a first run will fetch', async () => {
    hub = await hubWithDefaultModel();
    const env = localTestEnv({ HF_ENDPOINT: hub.url, META_AGENT_PROBE_URLS: await closedUrl() });
    const result = await runCli(['doctor'], { env });
    expect(result.stdout).toMatch(
      /^warn {2}model {7}hf:\S+ is not downloaded yet: its first use downloads it/m,
    );
    expect(hub.count('GET', '/cdn/')).toBe(0);
    expect(result.code).toBe(0);
  });

  it('doctor reports the runtime, the model, threads and GPU, and classifies with the model’s own token bias', async () => {
    const result = await runCli(['doctor', '--provider', 'local', '--model', tiny], { env: localTestEnv() });
    expect(result.stdout).toMatch(/^ok {4}runtime {5}node-llama-cpp 3\.\d+\.\d+ in /m);
    expect(result.stdout).toContain(`ok    model       ${tiny} (a file of your own)`);
    expect(result.stdout).toMatch(
      /^ok {4}runs on {5}1 CPU thread, no GPU, a 2048-token context; node-llama-cpp 3\.\d+\.\d+ \(prebuilt\)$/m,
    );
    // Random weights may pick the wrong word; the line shows the round trip ran on the model's labels.
    expect(result.stdout).toMatch(
      /^(ok|fail) {2}classify {4}tiny answered .*\b[A-C] \((seven|blue|Tuesday)\)/m,
    );
    expect([0, 1]).toContain(result.code);
  });

  it('shares the work with a server: the embedded classifier picks transitions, the server writes the replies', async () => {
    server = await startOpenAIServer();
    const result = await runCli(
      [
        'chat',
        GREETER,
        '--base-url',
        server.url,
        '-m',
        'gpt-4o-mini',
        '--classifier-model',
        `local:${tiny}`,
        '--no-tui',
      ],
      { input: 'Ada\nfine\n', env: localTestEnv() },
    );
    expect(result.code).toBe(0);
    const requests = server.chatRequests();
    expect(requests.length).toBeGreaterThanOrEqual(3);
    // Classifier questions ask for one token; none of them reached the server.
    expect(requests.filter((body) => body.max_tokens === 1)).toEqual([]);
    expect(result.stdout).toContain('Hello from the test server.');
  });
});
