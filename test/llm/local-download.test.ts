/**
 * Local models in the cache: references, where the cache is, and pulls from a fake Hugging Face hub on
 * loopback (checked, resumed after a cut, refused when corrupt or unreachable, HF_TOKEN kept on the hub).
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { UserError } from '../../src/errors.js';
import { Interrupted } from '../../src/interrupt.js';
import { hfModelPath, localCacheDir, modelsDir } from '../../src/llm/local/cache-dir.js';
import { cachedModel, pullModel, type DownloadProgress } from '../../src/llm/local/download.js';
import { formatModelRef, parseModelRef, type HfModelRef } from '../../src/llm/local/model-ref.js';
import { listCachedModels, removeCachedModel } from '../../src/llm/local/model-store.js';
import { sha256, startFakeHub, type FakeHub, type FakeHubOptions } from '../support/fake-hub.js';
import { closedUrl } from '../support/openai-server.js';
import { userError } from '../support/model-failure.js';

const content = randomBytes(300_000);
const REF = 'hf:acme/Tiny-GGUF/tiny-q4_k_m.gguf';
const ref = parseModelRef(REF) as HfModelRef;
const hubs: FakeHub[] = [];
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  env = { META_AGENT_CACHE_DIR: await mkdtemp(join(tmpdir(), 'model-cache-')) };
});

afterEach(async () => {
  vi.unstubAllGlobals();
  vi.unstubAllEnvs();
  await Promise.all(hubs.splice(0).map((hub) => hub.close()));
});

/** A hub serving `content` as REF, which `env` points at. */
async function hub(options: Partial<FakeHubOptions> = {}): Promise<FakeHub> {
  const started = await startFakeHub({
    files: [{ repo: 'acme/Tiny-GGUF', file: 'tiny-q4_k_m.gguf', content }],
    ...options,
  });
  hubs.push(started);
  env.HF_ENDPOINT = started.url;
  return started;
}

describe('model references', () => {
  it('reads hf:owner/name/file.gguf, with folders, and formats it back', () => {
    expect(parseModelRef(REF)).toEqual({ kind: 'hf', repo: 'acme/Tiny-GGUF', file: 'tiny-q4_k_m.gguf' });
    const nested = parseModelRef('hf:acme/Big-GGUF/Q8_0/big-q8_0.gguf');
    expect(nested).toEqual({ kind: 'hf', repo: 'acme/Big-GGUF', file: 'Q8_0/big-q8_0.gguf' });
    expect(formatModelRef(nested)).toBe('hf:acme/Big-GGUF/Q8_0/big-q8_0.gguf');
  });

  it('takes anything else as a path, resolved against the folder given', () => {
    expect(parseModelRef('models/tiny.gguf', '/work')).toEqual({
      kind: 'file',
      path: '/work/models/tiny.gguf',
    });
  });

  it.each([
    'hf:acme/tiny.gguf',
    'hf:acme/Tiny-GGUF/../../../etc/passwd.gguf',
    'hf:acme/Tiny-GGUF/./tiny.gguf',
    'hf:acme/Tiny GGUF/tiny.gguf',
    'hf:acme/Tiny-GGUF/tiny.bin',
    'hf:acme/Tiny-GGUF/.gguf',
    'hf:acme//tiny.gguf',
    'https://huggingface.co/acme/Tiny-GGUF/resolve/main/tiny.gguf',
    '',
  ])('refuses %j with an example of a valid reference (exit 2)', (text) => {
    let error: unknown;
    try {
      parseModelRef(text);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).exitCode).toBe(2);
    expect((error as UserError).hint).toContain('hf:Qwen/Qwen2.5-1.5B-Instruct-GGUF/');
  });

  it('will not map a reference built by hand outside the cache', () => {
    expect(() => hfModelPath({ kind: 'hf', repo: 'acme/x', file: '../../escape.gguf' }, env)).toThrow(
      UserError,
    );
  });
});

describe('the cache folder', () => {
  it('is META_AGENT_CACHE_DIR, else $XDG_CACHE_HOME/meta-agent, else the platform cache', () => {
    expect(localCacheDir({ META_AGENT_CACHE_DIR: '/tmp/mine', XDG_CACHE_HOME: '/xdg' })).toBe('/tmp/mine');
    expect(localCacheDir({ XDG_CACHE_HOME: '/xdg' })).toBe(join('/xdg', 'meta-agent'));
    expect(localCacheDir({ XDG_CACHE_HOME: 'relative' })).not.toContain('relative');
    if (process.platform === 'linux') expect(localCacheDir({})).toBe(join(homedir(), '.cache', 'meta-agent'));
    expect(modelsDir({ META_AGENT_CACHE_DIR: '/tmp/mine' })).toBe(join('/tmp/mine', 'models'));
  });
});

describe('pullModel', () => {
  it('downloads into MODELS/hf/OWNER/NAME/FILE, checks it, and writes its manifest', async () => {
    await hub();
    const progress: DownloadProgress[] = [];
    const model = await pullModel(ref, { env, onProgress: (p) => progress.push(p) });
    const path = join(modelsDir(env), 'hf', 'acme', 'Tiny-GGUF', 'tiny-q4_k_m.gguf');
    expect(model).toMatchObject({ ref: REF, path, size: content.length, sha256: sha256(content) });
    expect(Buffer.compare(await readFile(path), content)).toBe(0);
    expect(JSON.parse(await readFile(`${path}.json`, 'utf8'))).toEqual({
      ref: REF,
      size: content.length,
      sha256: sha256(content),
      downloadedAt: model.downloadedAt,
    });
    expect(existsSync(`${path}.part`) || existsSync(`${path}.part.json`)).toBe(false);
    expect(progress.at(-1)).toEqual({ received: content.length, total: content.length, resumedFrom: 0 });
  });

  it('answers from the cache the second time, without a request', async () => {
    const served = await hub();
    const first = await pullModel(ref, { env });
    const requests = served.requests.length;
    expect(await pullModel(ref, { env })).toEqual(first);
    expect(await cachedModel(ref, env)).toEqual(first);
    expect(served.requests.length).toBe(requests);
  });

  it('keeps what arrived before a cut, and the next pull resumes it with a Range', async () => {
    const served = await hub({ cutAfter: 100_000 });
    const error = await userError(pullModel(ref, { env }));
    expect(error.exitCode).toBe(1);
    expect(error.message).toContain('the download of hf:acme/Tiny-GGUF/tiny-q4_k_m.gguf stopped');
    expect(error.hint).toContain('resumes it');
    const part = `${hfModelPath(ref, env)}.part`;
    const kept = (await stat(part)).size;
    expect(kept).toBeGreaterThan(0);

    const progress: DownloadProgress[] = [];
    const model = await pullModel(ref, { env, onProgress: (p) => progress.push(p) });
    expect(served.requests.filter((r) => r.path.startsWith('/cdn/')).map((r) => r.headers.range)).toEqual([
      undefined,
      `bytes=${kept}-`,
    ]);
    expect(progress[0]).toEqual({ received: kept, total: content.length, resumedFrom: kept });
    expect(model.sha256).toBe(sha256(content));
    expect(Buffer.compare(await readFile(model.path), content)).toBe(0);
  });

  it('starts over when the server ignores the Range', async () => {
    const served = await hub({ cutAfter: 100_000, ignoreRange: true });
    await userError(pullModel(ref, { env }));
    const model = await pullModel(ref, { env });
    expect(served.count('GET', '/cdn/')).toBe(2);
    expect(Buffer.compare(await readFile(model.path), content)).toBe(0);
  });

  it('starts over when the part file was for another version of the file', async () => {
    const served = await hub();
    const path = hfModelPath(ref, env);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(`${path}.part`, randomBytes(1000));
    await writeFile(`${path}.part.json`, JSON.stringify({ sha256: 'a'.repeat(64), size: content.length }));
    const model = await pullModel(ref, { env });
    expect(served.requests.find((r) => r.path.startsWith('/cdn/'))?.headers.range).toBeUndefined();
    expect(model.sha256).toBe(sha256(content));
  });

  it('refuses a corrupt download and deletes it', async () => {
    await hub({ wrongChecksum: true });
    const error = await userError(pullModel(ref, { env }));
    expect(error.exitCode).toBe(1);
    expect(error.message).toMatch(/was corrupt \(its SHA-256 is [0-9a-f]{64}, the hub gave [0-9a-f]{64}\)/);
    const path = hfModelPath(ref, env);
    expect([path, `${path}.part`, `${path}.json`].filter((file) => existsSync(file))).toEqual([]);
  });

  it('says in one line that the hub cannot be reached and the model is not cached (exit 2)', async () => {
    env.HF_ENDPOINT = await closedUrl();
    const error = await userError(pullModel(ref, { env }));
    expect(error.exitCode).toBe(2);
    expect(error.message).toMatch(
      /^cannot download hf:acme\/Tiny-GGUF\/tiny-q4_k_m\.gguf: 127\.0\.0\.1:\d+ cannot be reached/,
    );
    expect(error.message).toContain(`the model is not in the cache (${modelsDir(env)})`);
    expect(error.message).not.toContain('\n');
    expect(error.hint).toContain('--model local:PATH');
  });

  it('says when the hub has no such file (exit 2)', async () => {
    await hub();
    const error = await userError(
      pullModel(parseModelRef('hf:acme/Tiny-GGUF/other.gguf') as HfModelRef, { env }),
    );
    expect(error.exitCode).toBe(2);
    expect(error.message).toBe('no such file on the hub: hf:acme/Tiny-GGUF/other.gguf');
  });

  it('refuses a file the hub gives no SHA-256 for', async () => {
    const started = await startFakeHub({
      files: [{ repo: 'acme/Tiny-GGUF', file: 'tiny-q4_k_m.gguf', content, notLfs: true }],
    });
    hubs.push(started);
    env.HF_ENDPOINT = started.url;
    const error = await userError(pullModel(ref, { env }));
    expect(error.message).toContain('has no SHA-256 on the hub');
    expect(started.count('GET')).toBe(0);
  });

  it('refuses a file that will not fit on the disk, before downloading any of it', async () => {
    const served = await hub({ advertisedSize: 2 ** 52 });
    const error = await userError(pullModel(ref, { env }));
    expect(error.message).toMatch(
      /^not enough disk space for hf:acme\/Tiny-GGUF\/tiny-q4_k_m\.gguf: it needs/,
    );
    expect(served.count('GET')).toBe(0);
  });

  it('stops a download that stalls, keeping what arrived', async () => {
    vi.stubEnv('META_AGENT_TIMEOUT_MS', '300');
    await hub({ stallAfter: 50_000 });
    const error = await userError(pullModel(ref, { env }));
    expect(error.message).toBe(
      'the download of hf:acme/Tiny-GGUF/tiny-q4_k_m.gguf stopped: no data for 0.3 s',
    );
    expect(error.hint).toContain('META_AGENT_TIMEOUT_MS');
    expect((await stat(`${hfModelPath(ref, env)}.part`)).size).toBe(50_000);
  });

  it('rejects with Interrupted when its signal aborts, keeping the part file', async () => {
    await hub({ stallAfter: 50_000 });
    const controller = new AbortController();
    const pulled = pullModel(ref, {
      env,
      signal: controller.signal,
      onProgress: (p) => p.received >= 50_000 && controller.abort(),
    });
    await expect(pulled).rejects.toBeInstanceOf(Interrupted);
    expect((await stat(`${hfModelPath(ref, env)}.part`)).size).toBe(50_000);
  });

  it('sends HF_TOKEN to the hub, and not to the CDN it redirects to', async () => {
    const served = await hub({ cdnBase: 'https://cdn.test' });
    env.HF_TOKEN = 'hf_secret';
    // The CDN's https origin is served by the hub itself, behind fetch: what reaches it is what was sent.
    const realFetch = globalThis.fetch;
    vi.stubGlobal('fetch', (url: string, init?: RequestInit) =>
      realFetch(url.replace('https://cdn.test', served.url), init),
    );
    await pullModel(ref, { env });
    const head = served.requests.find((r) => r.method === 'HEAD');
    const download = served.requests.find((r) => r.path.startsWith('/cdn/'));
    expect(head?.headers.authorization).toBe('Bearer hf_secret');
    expect(download).toBeDefined();
    expect(download?.headers.authorization).toBeUndefined();
  });

  it('will not follow a redirect to plain http on another origin', async () => {
    const other = await startFakeHub({ files: [] });
    hubs.push(other);
    await hub({ cdnBase: other.url });
    const error = await userError(pullModel(ref, { env }));
    expect(error.message).toContain('which is not https; not following it');
    expect(other.requests).toEqual([]);
  });
});

describe('the model store', () => {
  it('lists and removes cached models, skipping manifests that are not right', async () => {
    await hub();
    const model = await pullModel(ref, { env });
    const dir = dirname(model.path);
    await writeFile(join(dir, 'garbage.gguf.json'), '{ not json');
    await writeFile(join(dir, 'planted.gguf'), 'x');
    // A manifest claiming another model's reference is not that model.
    await writeFile(join(dir, 'planted.gguf.json'), JSON.stringify({ ...model, path: undefined, size: 1 }));
    expect(await listCachedModels(env)).toEqual([model]);

    expect(await removeCachedModel(ref, env)).toEqual(model);
    expect(existsSync(model.path) || existsSync(`${model.path}.json`)).toBe(false);
    expect(await listCachedModels(env)).toEqual([]);
    expect(await removeCachedModel(ref, env)).toBeUndefined();
  });

  it('lists nothing for a cache that does not exist yet', async () => {
    expect(
      await listCachedModels({ META_AGENT_CACHE_DIR: join(tmpdir(), 'no-such-cache', String(Date.now())) }),
    ).toEqual([]);
  });

  it('removes a partial download with the model', async () => {
    await hub({ cutAfter: 10_000 });
    await userError(pullModel(ref, { env }));
    expect(await removeCachedModel(ref, env)).toBeUndefined();
    expect(existsSync(`${hfModelPath(ref, env)}.part`)).toBe(false);
  });
});
