/**
 * Pulling an embedded model, against what a cache or a server can hold in store: links planted at the
 * part file, its record or the manifest (the hub's bytes must never be written through them), a server
 * that trickles a byte now and then (the idle timeout alone never fires), an empty file, a cache that
 * cannot be written, installs killed midway, and an npm registry that cannot be reached (the answer
 * must come in seconds, not the minutes npm's own retries take).
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { link, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { hfModelPath } from '../../src/llm/local/cache-dir.js';
import { MIN_BYTES_PER_SECOND, pullModel } from '../../src/llm/local/download.js';
import { parseModelRef, type HfModelRef } from '../../src/llm/local/model-ref.js';
import { installRuntime, runtimeDir } from '../../src/llm/local/runtime.js';
import { sha256, startFakeHub, type FakeHub, type FakeHubOptions } from '../support/fake-hub.js';
import { closedUrl } from '../support/openai-server.js';
import { userError } from '../support/model-failure.js';

const content = randomBytes(300_000);
const ref = parseModelRef('hf:acme/Tiny-GGUF/tiny-q4_k_m.gguf') as HfModelRef;
const OUTSIDE_TEXT = 'the user’s own file\n';

let base: string;
let env: NodeJS.ProcessEnv;
let outside: string;
const hubs: FakeHub[] = [];
const servers: Server[] = [];

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'meta-agent-model-pull-'));
  env = { META_AGENT_CACHE_DIR: join(base, 'cache') };
  outside = join(base, 'outside.txt');
  await writeFile(outside, OUTSIDE_TEXT);
});

afterEach(async () => {
  vi.unstubAllEnvs();
  await Promise.all(hubs.splice(0).map((hub) => hub.close()));
  await Promise.all(
    servers.splice(0).map((server) => {
      server.closeAllConnections();
      return new Promise((done) => server.close(done));
    }),
  );
  await rm(base, { recursive: true, force: true });
});

async function hub(options: Partial<FakeHubOptions> = {}): Promise<FakeHub> {
  const started = await startFakeHub({
    files: [{ repo: 'acme/Tiny-GGUF', file: 'tiny-q4_k_m.gguf', content }],
    ...options,
  });
  hubs.push(started);
  env.HF_ENDPOINT = started.url;
  return started;
}

async function outsideUntouched(): Promise<void> {
  expect(await readFile(outside, 'utf8')).toBe(OUTSIDE_TEXT);
}

/** The model's path in the cache, its folder made, and the record a pull of `content` would expect. */
async function plantedPlace(): Promise<{ path: string; part: string; record: string; expected: string }> {
  const path = hfModelPath(ref, env);
  await mkdir(dirname(path), { recursive: true });
  const expected = JSON.stringify({ sha256: sha256(content), size: content.length });
  return { path, part: `${path}.part`, record: `${path}.part.json`, expected };
}

async function expectModelRight(path: string): Promise<void> {
  expect((await stat(path, { bigint: false })).isFile()).toBe(true);
  expect(Buffer.compare(await readFile(path), content)).toBe(0);
}

describe('links planted in the model cache', () => {
  it('a symlinked part file with a matching record is discarded, never appended to', async () => {
    await hub();
    const { path, part, record, expected } = await plantedPlace();
    await symlink(outside, part);
    await writeFile(record, expected);
    const model = await pullModel(ref, { env });
    await outsideUntouched();
    expect(model.sha256).toBe(sha256(content));
    await expectModelRight(path);
  });

  it('a symlinked part file that points at a file of the right size is not read either', async () => {
    // Were it followed, the pull would "resume" from its bytes and rename the link into the model's place.
    await writeFile(outside, content);
    await hub();
    const { path, part, record, expected } = await plantedPlace();
    await symlink(outside, part);
    await writeFile(record, expected);
    await pullModel(ref, { env });
    expect((await stat(path)).ino).not.toBe((await stat(outside)).ino);
    await expectModelRight(path);
  });

  it('a part file hard-linked to a file outside is discarded, and the file outside keeps its text', async () => {
    await hub();
    const { path, part, record, expected } = await plantedPlace();
    await link(outside, part);
    await writeFile(record, expected);
    await pullModel(ref, { env });
    await outsideUntouched();
    await expectModelRight(path);
  });

  it('a symlinked record and manifest are replaced, not written through', async () => {
    await hub();
    const { path, record } = await plantedPlace();
    const otherOutside = join(base, 'other.txt');
    await writeFile(otherOutside, OUTSIDE_TEXT);
    await symlink(outside, record);
    await symlink(otherOutside, `${path}.json`);
    await pullModel(ref, { env });
    await outsideUntouched();
    expect(await readFile(otherOutside, 'utf8')).toBe(OUTSIDE_TEXT);
    await expectModelRight(path);
  });

  it('a folder at the part path is removed, and the pull goes on', async () => {
    await hub();
    const { path, part, record, expected } = await plantedPlace();
    await mkdir(part);
    await writeFile(record, expected);
    await pullModel(ref, { env });
    await expectModelRight(path);
  });
});

/**
 * A hub that serves `content` as the fake hub does, but sends its bytes one at a time, every
 * `everyMs`: never idle long enough for the idle timeout.
 */
async function tricklingHub(everyMs: number): Promise<void> {
  const sha = sha256(content);
  const server = createServer((request, response) => {
    if (request.url?.startsWith('/cdn/')) {
      response.writeHead(200, { 'content-length': content.length });
      let sent = 0;
      const timer = setInterval(() => {
        if (response.destroyed || sent >= content.length) return clearInterval(timer);
        response.write(content.subarray(sent, sent + 1));
        sent += 1;
      }, everyMs);
      response.on('close', () => clearInterval(timer));
      return;
    }
    response
      .writeHead(302, {
        location: `/cdn/${sha}`,
        'x-linked-etag': `"${sha}"`,
        'x-linked-size': String(content.length),
      })
      .end();
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  env.HF_ENDPOINT = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('a server that trickles', () => {
  it('is stopped once a whole wait passes under the minimum rate, keeping what arrived', async () => {
    // The wait (META_AGENT_TIMEOUT_MS) is both the idle timeout and the window the rate is taken over.
    vi.stubEnv('META_AGENT_TIMEOUT_MS', '1000');
    await tricklingHub(50);
    const started = Date.now();
    const error = await userError(pullModel(ref, { env }));
    expect(error.message).toMatch(
      /^the download of hf:acme\/Tiny-GGUF\/tiny-q4_k_m\.gguf stopped: only \d+ B arrived in \d+\.\d s, under the 1 kB\/s a download must keep up$/,
    );
    expect(error.exitCode).toBe(1);
    expect(error.hint).toContain('META_AGENT_TIMEOUT_MS');
    expect(error.hint).toContain('resumes it');
    expect((await stat(`${hfModelPath(ref, env)}.part`)).size).toBeGreaterThan(0);
    // At 20 bytes a second the 300 kB would take four hours; the pull ends after a wait or two.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(MIN_BYTES_PER_SECOND).toBe(1024);
  }, 30_000);
});

describe('files and caches that are not what a pull expects', () => {
  it('an empty file on the hub is refused as not a model, not blamed on disk space', async () => {
    const served = await startFakeHub({
      files: [{ repo: 'acme/Tiny-GGUF', file: 'tiny-q4_k_m.gguf', content: Buffer.alloc(0) }],
    });
    hubs.push(served);
    env.HF_ENDPOINT = served.url;
    const error = await userError(pullModel(ref, { env }));
    expect(error.message).toBe(
      'hf:acme/Tiny-GGUF/tiny-q4_k_m.gguf is an empty file (0 bytes) on the hub, so it is not a model; not downloading it',
    );
    expect(error.exitCode).toBe(2);
    expect(error.hint).not.toContain('free some space');
    expect(existsSync(hfModelPath(ref, env))).toBe(false);
  });

  it('a cache that cannot be written is not blamed on disk space', async () => {
    await hub();
    // A file where the cache folder should be: no folder can be made in it, whoever runs the test.
    await writeFile(join(base, 'cache'), 'not a folder');
    const error = await userError(pullModel(ref, { env }));
    expect(error.message).toMatch(
      /^cannot write hf:acme\/Tiny-GGUF\/tiny-q4_k_m\.gguf into the model cache /,
    );
    expect(error.exitCode).toBe(2);
    expect(error.hint).not.toContain('free some space');
    expect(error.hint).toContain('META_AGENT_CACHE_DIR');
  });
});

describe('installing the runtime', () => {
  /** An environment whose npm registry cannot be reached, with none of npm's retry settings. */
  async function offlineNpm(root: string): Promise<NodeJS.ProcessEnv> {
    const inherited = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !/^npm_config_fetch/i.test(name)),
    );
    return {
      ...inherited,
      META_AGENT_RUNTIME_DIR: root,
      npm_config_registry: await closedUrl(),
      npm_config_cache: join(root, '.npm-cache'),
      npm_config_offline: 'false',
    };
  }

  it('removes the folders that killed installs left, keeping a running one’s', async () => {
    const root = join(base, 'runtime');
    const npmEnv = await offlineNpm(root);
    const target = runtimeDir(npmEnv);
    await mkdir(dirname(target), { recursive: true });
    // The PID of a process that has ended, and this test's parent (running) as another installer.
    const dead = `${target}.installing-${await endedPid()}`;
    const running = `${target}.installing-${process.ppid}`;
    for (const folder of [dead, running]) {
      await mkdir(join(folder, 'node_modules'), { recursive: true });
      await writeFile(join(folder, 'node_modules', 'half.js'), 'x');
    }
    await userError(installRuntime(npmEnv));
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(running)).toBe(true);
    expect((await readdir(dirname(target))).sort()).toEqual([
      '.npm-cache',
      running.slice(dirname(target).length + 1),
    ]);
  }, 60_000);

  it('says in seconds, not minutes, that the registry cannot be reached', async () => {
    const root = join(base, 'runtime');
    const started = Date.now();
    const error = await userError(installRuntime(await offlineNpm(root)));
    // npm's own retry waits (10 s, then 60 s, per package) made this take 140 s.
    expect(Date.now() - started).toBeLessThan(45_000);
    expect(error.exitCode).toBe(2);
    expect(error.message).toMatch(/from the npm registry: .*ECONNREFUSED/);
    expect(error.message).not.toContain('\n');
  }, 60_000);
});

/** The PID of a process that has ended. */
async function endedPid(): Promise<number> {
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((done) => child.once('close', done));
  return child.pid!;
}
