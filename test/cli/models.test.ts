/**
 * `meta-agent models` end to end: the built CLI as a subprocess, its cache in a scratch folder, pulling
 * from a fake Hugging Face hub on loopback.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sha256, startFakeHub, type FakeHub, type FakeHubOptions } from '../support/fake-hub.js';
import { TEST_RUNTIME_DIR, ensureTestRuntime } from '../support/local-runtime.js';
import { closedUrl } from '../support/openai-server.js';
import { runCli, type CliResult, type RunCliOptions } from '../support/run-cli.js';

const content = randomBytes(400_000);
const REF = 'hf:acme/Tiny-GGUF/tiny-q4_k_m.gguf';
const DEFAULT_REF = 'hf:Qwen/Qwen2.5-1.5B-Instruct-GGUF/qwen2.5-1.5b-instruct-q4_k_m.gguf';

let cache: string;
let endpoint: string;
const hubs: FakeHub[] = [];

beforeAll(ensureTestRuntime, 120_000);

beforeEach(async () => {
  cache = await mkdtemp(join(tmpdir(), 'models-cli-'));
});

afterEach(async () => {
  await Promise.all(hubs.splice(0).map((hub) => hub.close()));
});

async function hub(options: Partial<FakeHubOptions> = {}): Promise<FakeHub> {
  const started = await startFakeHub({
    files: [{ repo: 'acme/Tiny-GGUF', file: 'tiny-q4_k_m.gguf', content }],
    ...options,
  });
  hubs.push(started);
  endpoint = started.url;
  return started;
}

/** `meta-agent models ...args` with the scratch cache, the hub and the tests' runtime (a pull installs it). */
function models(args: string[], options: RunCliOptions = {}): Promise<CliResult> {
  return runCli(['models', ...args], {
    ...options,
    env: {
      META_AGENT_CACHE_DIR: cache,
      HF_ENDPOINT: endpoint,
      META_AGENT_RUNTIME_DIR: TEST_RUNTIME_DIR,
      ...options.env,
    },
  });
}

async function ok(args: string[], options?: RunCliOptions): Promise<CliResult> {
  const result = await models(args, options);
  expect(result.code, result.stderr).toBe(0);
  return result;
}

const modelPath = () => join(cache, 'models', 'hf', 'acme', 'Tiny-GGUF', 'tiny-q4_k_m.gguf');

describe('meta-agent models', () => {
  it('pulls a model with progress on stderr, then lists it, then removes it', async () => {
    const served = await hub();
    const pulled = await ok(['pull', REF]);
    expect(pulled.stdout).toBe(`downloaded ${REF} (400 kB, SHA-256 checked) to ${modelPath()}\n`);
    expect(pulled.stderr).toContain(`downloading ${REF} (400 kB)\n`);
    expect(pulled.stderr).toContain(`downloading ${REF}: 100% (400 kB of 400 kB)\n`);
    expect(Buffer.compare(await readFile(modelPath()), content)).toBe(0);

    const requests = served.requests.length;
    const again = await ok(['pull', REF]);
    expect(again.stdout).toBe(`${REF} is already in the cache: ${modelPath()}\n`);
    expect(served.requests.length).toBe(requests);

    const listed = await ok(['list']);
    expect(listed.stdout.split('\n')[0]).toMatch(/^hf:acme\/Tiny-GGUF\/tiny-q4_k_m\.gguf +400 kB {2}\//);
    expect(listed.stdout.split('\n')[0]?.endsWith(modelPath())).toBe(true);
    expect(listed.stdout).toContain(
      `\n${DEFAULT_REF}  not downloaded, about 1.1 GB; \`meta-agent models pull\` fetches it\n`,
    );
    const json = JSON.parse((await ok(['list', '--json'])).stdout) as {
      cache: string;
      models: Array<{ ref: string; path: string; size: number; sha256: string }>;
      default: { ref: string; downloaded: boolean };
    };
    expect(json.cache).toBe(join(cache, 'models'));
    expect(json.models).toMatchObject([
      { ref: REF, path: modelPath(), size: content.length, sha256: sha256(content) },
    ]);
    expect(json.default).toMatchObject({ ref: DEFAULT_REF, downloaded: false });

    const removed = await ok(['rm', REF]);
    expect(removed.stdout).toBe(`removed ${REF} (400 kB) from ${join(cache, 'models')}\n`);
    expect(existsSync(modelPath())).toBe(false);
    const gone = await models(['rm', REF]);
    expect(gone.code).toBe(2);
    expect(gone.stderr).toContain(`error: ${REF} is not in the model cache`);
  });

  it('says in one line, exit 2, that the hub cannot be reached when offline', async () => {
    endpoint = await closedUrl();
    const result = await models(['pull', REF]);
    expect(result.code).toBe(2);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      new RegExp(
        `^error: cannot download ${REF}: 127\\.0\\.0\\.1:\\d+ cannot be reached \\(ECONNREFUSED\\), and the model is not in the cache \\(`,
      ),
    );
    expect(lines[1]).toContain('hint: connect to the internet once, or copy a .gguf file');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('stops on Ctrl+C with exit 130, keeping the partial download, and the next pull resumes it', async () => {
    const served = await hub({ stallAfter: 150_000 });
    const interrupted = await models(['pull', REF], {
      // Once a third has arrived: the fake hub then sends nothing more.
      interruptWhen: (stderr) => stderr.includes(`downloading ${REF}: 30%`),
    });
    expect(interrupted.code, interrupted.stderr).toBe(130);
    expect(interrupted.stderr).toContain(
      'was interrupted; what arrived is kept, and the next pull resumes it',
    );
    expect(existsSync(`${modelPath()}.part`)).toBe(true);

    await ok(['pull', REF]);
    const ranges = served.requests.filter((r) => r.path.startsWith('/cdn/')).map((r) => r.headers.range);
    expect(ranges).toHaveLength(2);
    expect(ranges[1]).toMatch(/^bytes=[1-9]\d*-$/);
    expect(Buffer.compare(await readFile(modelPath()), content)).toBe(0);
  });

  it('refuses a malformed reference, a path, and an unknown file (exit 2)', async () => {
    await hub();
    const bad = await models(['pull', 'hf:acme/../x.gguf']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('is not a model reference');
    const path = await models(['pull', './tiny.gguf']);
    expect(path.code).toBe(2);
    expect(path.stderr).toContain('hint: a .gguf file on disk needs no pull');
    const unknown = await models(['pull', 'hf:acme/Tiny-GGUF/missing.gguf']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('error: no such file on the hub: hf:acme/Tiny-GGUF/missing.gguf');
  });

  it('lists the default model as not downloaded in an empty cache', async () => {
    const result = await ok(['list']);
    expect(result.stdout).toBe(
      `${DEFAULT_REF}  not downloaded, about 1.1 GB; \`meta-agent models pull\` fetches it\n`,
    );
    expect(result.stderr).toContain('holds no model yet');
  });

  it('explains in --help where models go, the variables, and resuming', async () => {
    for (const args of [['--help'], ['pull', '--help']]) {
      const help = (await ok(args)).stdout;
      expect(help).toContain('META_AGENT_CACHE_DIR');
      expect(help).toContain('HF_ENDPOINT');
      expect(help).toContain('~/.cache/meta-agent');
      expect(help).toMatch(/resume/);
    }
  });
});
