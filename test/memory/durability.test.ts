import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { MANIFEST_FILE } from '../../memory/manifest.js';
import { MemoryStore } from '../../memory/store.js';
import { wordEmbedder } from '../support/embedders.js';
import { TS_CHILD_ARGS } from '../support/ts-child.js';

const run = promisify(execFile);
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const nodeArgs = [...TS_CHILD_ARGS, here('./writer-child.ts')];

async function namespace(): Promise<string> {
  return join(await mkdtemp(join(tmpdir(), 'memory-')), 'ns');
}

async function open(folder: string, notices: string[] = []) {
  return MemoryStore.open({ folder, embedder: wordEmbedder(), onNotice: (message) => notices.push(message) });
}

/** Runs the writer until it has printed `lines` lines, then kills it with SIGKILL `delayMs` later. */
function killWriter(folder: string, lines: number, delayMs: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, folder, 'write'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let armed = false;
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (!armed && out.split('\n').length > lines) {
        armed = true;
        setTimeout(() => child.kill('SIGKILL'), delayMs);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('exit', (_code, signal) =>
      signal === 'SIGKILL'
        ? resolve(out.split('\n').filter(Boolean))
        : reject(new Error(`writer exited: ${err}`)),
    );
  });
}

describe('memory on disk', () => {
  it('kill -9 at any moment of a write leaves a namespace that opens with every change that returned', async () => {
    const folder = await namespace();
    const seen = { added: new Set<string>(), forgetting: new Set<string>(), forgot: new Set<string>() };
    for (const [lines, delay] of [
      [30, 0],
      [100, 7],
      [200, 23],
      [300, 41],
      [420, 3],
    ] as const) {
      for (const line of await killWriter(folder, lines, delay)) {
        const [what, id] = line.split(' ') as [keyof typeof seen, string];
        seen[what].add(id);
      }
      const notices: string[] = [];
      const store = await open(folder, notices);
      const held = new Set((await store.list()).map((item) => item.id));
      // A forget the kill cut short may or may not have reached the disk; every other answer is known.
      for (const id of seen.added)
        if (!seen.forgetting.has(id)) expect(held.has(id), `memory ${id}`).toBe(true);
      for (const id of seen.forgot) expect(held.has(id), `forgotten ${id}`).toBe(false);
      expect((await store.search('topic 4', 3)).length).toBe(3);
      expect(notices).toEqual([]);
    }
  }, 120_000);

  it('answers the same in a new process as in the one that wrote it', async () => {
    const folder = await namespace();
    const store = await open(folder);
    await store.addMany(Array.from({ length: 120 }, (_, i) => ({ text: `note ${i} on subject ${i % 11}` })));
    await store.close();
    const here = (await store.search('subject 5 note', 5)).map((hit) => hit.id);
    const { stdout } = await run(process.execPath, [...nodeArgs, folder, 'search', 'subject 5 note']);
    expect(JSON.parse(stdout)).toEqual(here);
    expect((await readdir(folder)).some((name) => name.endsWith('.hnsw'))).toBe(true);
  });

  it('never loads an index file its manifest does not describe: it rebuilds from the log', async () => {
    const folder = await namespace();
    const store = await open(folder);
    await store.addMany(Array.from({ length: 30 }, (_, i) => ({ text: `item ${i} colour ${i % 4}` })));
    await store.close();
    const expected = (await store.search('colour 2', 5)).map((hit) => hit.id);
    const index = (await readdir(folder)).find((name) => name.endsWith('.hnsw'))!;
    // Swapped for another file of the same length: a shared folder is untrusted.
    const { size } = await import('node:fs/promises').then((fs) => fs.stat(join(folder, index)));
    await writeFile(join(folder, index), Buffer.alloc(size, 0xff));
    const notices: string[] = [];
    const reopened = await open(folder, notices);
    // The open leaves the vectors file for the first search by meaning, which checks it then.
    expect(notices).toEqual([]);
    expect((await reopened.search('colour 2', 5)).map((hit) => hit.id)).toEqual(expected);
    expect(notices).toEqual([
      expect.stringMatching(
        /the saved index was not used \(vectors-.*\.hnsw is not the file its manifest describes\); rebuilt from the log/,
      ),
    ]);
  });

  it('reads the namespace once again when its index file, checked only now, fails after others appended', async () => {
    const folder = await namespace();
    const writer = await open(folder);
    await writer.addMany(Array.from({ length: 30 }, (_, i) => ({ text: `item ${i} colour ${i % 4}` })));
    await writer.close();
    const notices: string[] = [];
    const reader = await open(folder, notices);
    const index = (await readdir(folder)).find((name) => name.endsWith('.hnsw'))!;
    const { size } = await import('node:fs/promises').then((fs) => fs.stat(join(folder, index)));
    await writeFile(join(folder, index), Buffer.alloc(size, 0xff));
    // Appended with its vector, after the reader's open: catching up with it needs the index.
    await writer.add('a violet shed');
    const hits = await reader.search('violet shed', 3);
    expect(hits[0]!.text).toBe('a violet shed');
    expect(notices).toEqual([expect.stringMatching(/the saved index was not used .*; rebuilt from the log/)]);
    expect(await reader.list()).toHaveLength(31);
  });

  it('ignores index files that come without a manifest', async () => {
    const folder = await namespace();
    const store = await open(folder);
    await store.addMany([{ text: 'kept in the log' }]);
    await store.close();
    const { unlink } = await import('node:fs/promises');
    await unlink(join(folder, MANIFEST_FILE));
    await writeFile(join(folder, 'vectors-0123456789ab.hnsw'), Buffer.alloc(4096, 0xff));
    const reopened = await open(folder);
    expect((await reopened.search('log', 1))[0]!.text).toBe('kept in the log');
  });
});
