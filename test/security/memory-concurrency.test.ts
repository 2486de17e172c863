/**
 * Several processes on one namespace at once: writers that add, forget and close (a snapshot almost
 * every time, a compaction now and then, each removing the files of the one before), and readers that
 * open, search and list meanwhile. A reader that read the manifest just before a writer replaced the
 * files it names must read that snapshot whole or the next one, never fail and never fall back to a
 * rebuild; and afterwards every memory that was added and not forgotten is there.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../memory/store.js';
import { wordEmbedder } from '../support/embedders.js';
import { TS_CHILD_ARGS } from '../support/ts-child.js';

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const nodeArgs = [...TS_CHILD_ARGS, here('../memory/store-child.ts')];

const WRITERS = 3;
const READERS = 2;
/** The longest the processes work side by side (on top of starting up). */
const WORK_MS = 60_000;
/**
 * Rounds each writer does: 90 in all, each a snapshot, with compactions between; the readers read until
 * the writers are done.
 */
const ROUNDS = 30;

interface Finished {
  name: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function child(name: string, args: string[]): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const running = spawn(process.execPath, [...nodeArgs, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    running.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    running.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    // A hung process is a failure of its own: killed well before the test's timeout.
    const timer = setTimeout(() => running.kill('SIGKILL'), WORK_MS + 60_000);
    running.on('error', reject);
    running.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ name, code, signal, stdout, stderr });
    });
  });
}

describe('memory shared by processes', () => {
  it('writers and readers at once: no operation fails, no rebuild, every memory kept', async () => {
    const folder = join(await mkdtemp(join(tmpdir(), 'memory-race-')), 'ns');
    const until = String(Date.now() + WORK_MS);
    const stop = `${folder}.stop`;
    const writers = Promise.all(
      Array.from({ length: WRITERS }, (_, w) =>
        child(`writer ${w}`, [folder, 'write', `w${w}`, String(ROUNDS), until]),
      ),
    );
    const readers = Array.from({ length: READERS }, (_, r) =>
      child(`reader ${r}`, [folder, 'read', until, stop]),
    );
    await writers.finally(() => writeFile(stop, ''));
    const finished = [...(await writers), ...(await Promise.all(readers))];
    for (const { name, code, signal, stderr } of finished)
      expect({ name, code, signal, stderr }).toEqual({ name, code: 0, signal: null, stderr: '' });

    const added = new Map<string, string>();
    const forgotten = new Set<string>();
    for (const { stdout } of finished)
      for (const line of stdout.split('\n')) {
        const [what, id, token] = line.split(' ');
        if (what === 'added') added.set(id!, token!);
        if (what === 'forgot') forgotten.add(id!);
      }
    // Enough happened for the race to be run: snapshots and compactions by every writer.
    expect(added.size).toBeGreaterThanOrEqual(WRITERS * 4 * 10);
    expect(forgotten.size).toBe(added.size / 2);

    const notices: string[] = [];
    const store = await MemoryStore.open({
      folder,
      embedder: wordEmbedder(),
      onNotice: (message) => notices.push(message),
    });
    const kept = [...added.keys()].filter((id) => !forgotten.has(id));
    expect((await store.list()).map((item) => item.id).sort()).toEqual(kept.sort());
    for (const id of kept) {
      const hits = await store.search(added.get(id)!, 5);
      expect(hits.map((hit) => hit.id)).toContain(id);
    }
    expect(notices).toEqual([]);
  }, 180_000);
});
