/**
 * The files of a memory folder that are not regular files: a FIFO, which blocks whoever opens it for
 * reading until a writer comes, a symlink to /dev/zero, which never ends, or a snapshot named `..`.
 * Each is met by the built CLI as a subprocess: it must end on its own, with one line saying which file
 * and why (a log, manifest or lock file), or by rebuilding from the log (a snapshot file), never hang.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LOCK_FILE } from '../../memory/lock.js';
import { LOG_FILE } from '../../memory/log-file.js';
import { MANIFEST_FILE } from '../../memory/manifest.js';
import { MemoryStore } from '../../memory/store.js';
import { wordEmbedder } from '../support/embedders.js';
import { closedUrl } from '../support/openai-server.js';

const bin = fileURLToPath(new URL('../../bin/meta-agent.js', import.meta.url));
const root = fileURLToPath(new URL('../../', import.meta.url));

/** Longer than any of these commands takes, far shorter than a hang. */
const HANG_MS = 20_000;

let noServer: string;
let workspace: string;
let folder: string;

interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** `meta-agent memory ...args` in the workspace. */
function memory(...args: string[]): Promise<Result> {
  return cli(['memory', ...args, '--workspace', workspace]);
}

/** `meta-agent ...args`, where no model server answers; killed after HANG_MS. */
function cli(args: string[]): Promise<Result> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env))
    if (value !== undefined && !/^(OPENAI_|META_AGENT_)/.test(name)) env[name] = value;
  Object.assign(env, {
    NO_COLOR: '1',
    META_AGENT_PROBE_URLS: noServer,
    META_AGENT_CACHE_DIR: mkdtempSync(join(tmpdir(), 'meta-agent-cli-cache-')),
    HF_ENDPOINT: 'http://127.0.0.1:9',
  });
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), HANG_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/**
 * Ended on its own with a user error: one `error:` line naming `file`, then at most its hint (after the
 * notes a command without a model server gives before it opens memory).
 */
function expectOneLine(result: Result, file: RegExp): void {
  expect(result.signal, `killed after ${HANG_MS} ms: ${result.stderr}`).toBeNull();
  expect(result.code, result.stderr).toBe(2);
  const lines = result.stderr.trimEnd().split('\n');
  const [error, ...rest] = lines.filter((line) => !line.startsWith('note: '));
  expect(error).toMatch(/^error: memory: /);
  expect(error).toMatch(file);
  expect(
    rest.every((line) => line.startsWith('hint: ')),
    result.stderr,
  ).toBe(true);
  expect(result.stderr).not.toContain('looks like a bug');
}

/** Ended on its own, fine, having said that the snapshot was not used. */
function expectRebuilt(result: Result, file: RegExp): void {
  expect(result.signal, `killed after ${HANG_MS} ms: ${result.stderr}`).toBeNull();
  expect(result.code, result.stderr).toBe(0);
  expect(result.stderr).toMatch(
    /note: memory in .*: the saved index was not used \(.*\); rebuilt from the log/,
  );
  expect(result.stderr.match(/not used \((.*)\); rebuilt/)![1]).toMatch(file);
}

const mkfifo = (path: string) => execFileSync('mkfifo', [path]);

async function replaceWith(path: string, make: (path: string) => unknown): Promise<void> {
  await rm(path, { force: true });
  await make(path);
}

const devZero = (path: string) => symlink('/dev/zero', path);

async function snapshotFile(pattern: RegExp): Promise<string> {
  return join(
    folder,
    (await readdir(folder)).find((name) => pattern.test(name))!,
  );
}

beforeAll(async () => {
  noServer = await closedUrl();
});

beforeEach(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'memory-files-'));
  folder = join(workspace, '.meta-agent', 'memory', 'shared');
  // Vectors too, so the namespace has both snapshot files; the CLI then reads them without an embedder.
  const store = await MemoryStore.open({ folder, embedder: wordEmbedder() });
  await store.addMany(Array.from({ length: 20 }, (_, i) => ({ text: `fact ${i} about the garden` })));
  await store.close();
});

describe.skipIf(process.platform === 'win32')('memory files that are not regular files', () => {
  it('the namespace as made is read without a word', async () => {
    const result = await memory('list', '--json');
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toHaveLength(20);
  });

  for (const [name, make] of [
    ['a FIFO', mkfifo],
    ['a symlink to /dev/zero', devZero],
  ] as const) {
    it(`a log that is ${name}: one line, no hang`, async () => {
      await replaceWith(join(folder, LOG_FILE), make);
      expectOneLine(await memory('list'), /items\.jsonl/);
    });

    it(`a manifest that is ${name}: one line, no hang`, async () => {
      await replaceWith(join(folder, MANIFEST_FILE), make);
      expectOneLine(await memory('search', 'garden'), /manifest\.json/);
    });

    it(`a lock file that is ${name}: one line when writing, no hang`, async () => {
      await make(join(folder, LOCK_FILE));
      expectOneLine(await memory('add', 'one more fact'), /lock/);
    });

    it(`a words index that is ${name}: rebuilt from the log`, async () => {
      await replaceWith(await snapshotFile(/^words-.*\.json$/), make);
      const result = await memory('search', 'fact 3 garden', '--json');
      expectRebuilt(result, /words-.*\.json/);
      expect(JSON.parse(result.stdout)[0]).toMatchObject({ text: 'fact 3 about the garden' });
    });

    it(`a vectors index that is ${name}: rebuilt from the log`, async () => {
      await replaceWith(await snapshotFile(/^vectors-.*\.hnsw$/), make);
      const result = await memory('list', '--json');
      expectRebuilt(result, /vectors-.*\.hnsw/);
      expect(JSON.parse(result.stdout)).toHaveLength(20);
    });
  }

  it('a run whose memory log is a FIFO: one line before it starts, no hang', async () => {
    await replaceWith(join(folder, LOG_FILE), mkfifo);
    const run = [
      'run',
      '--name',
      'Keeper',
      '--yes',
      '--workspace',
      workspace,
      '--memory',
      'shared',
      '--base-url',
      noServer,
      '--model',
      'gpt-4o-mini',
      '--goal',
      'Read office.txt',
    ];
    expectOneLine(await cli(run), /items\.jsonl.*FIFO/);
  });

  it('a log that is a symlink to another regular file: refused, not followed', async () => {
    const elsewhere = join(workspace, 'elsewhere.jsonl');
    await writeFile(elsewhere, await readFile(join(folder, LOG_FILE)));
    await replaceWith(join(folder, LOG_FILE), (path) => symlink(elsewhere, path));
    expectOneLine(await memory('list'), /items\.jsonl.*symbolic link/);
  });

  for (const name of ['..', '.', '']) {
    it(`a manifest whose snapshot file is named "${name}": one line, no hang`, async () => {
      const path = join(folder, MANIFEST_FILE);
      const manifest = JSON.parse(await readFile(path, 'utf8')) as { snapshot: { words: { file: string } } };
      manifest.snapshot.words.file = name;
      await writeFile(path, JSON.stringify(manifest));
      expectOneLine(await memory('list'), /manifest\.json/);
    });
  }
});
