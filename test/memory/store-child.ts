/**
 * A store in a process of its own, for the security tests: what crashes hnswlib takes the process with
 * it, and races need processes that do not share memory. Usage: store-child.ts FOLDER MODE ...
 * - `search QUERY`: opens the namespace and prints the ids of the 5 closest memories as JSON. Notices
 *   go to stderr as `note: …`; a damaged namespace ends with exit 2 and its one line, as the CLI does.
 * - `write TAG ROUNDS UNTIL`: per round, opens the namespace, adds 4 memories (texts
 *   `TAG r<round> i<i> …`), forgets the first 2 of them, and closes it (a snapshot, now and then a
 *   compaction), printing `added ID TOKEN` and `forgot ID`; stops after ROUNDS or at UNTIL (epoch ms).
 * - `read UNTIL STOP`: opens the namespace, searches and lists it, again and again until UNTIL or until
 *   the file STOP is there.
 * Any other error ends with exit 1 and its stack.
 */
import { existsSync } from 'node:fs';
import { MemoryDamaged, MemoryStore } from '../../memory/store.js';
import { wordEmbedder } from '../support/embedders.js';

const [folder, mode, ...rest] = process.argv.slice(2);
if (!folder || !mode) throw new Error('usage: store-child.ts FOLDER search|write|read ...');

const open = () =>
  MemoryStore.open({
    folder,
    embedder: wordEmbedder(),
    onNotice: (message) => process.stderr.write(`note: ${message}\n`),
  });

try {
  if (mode === 'search') await search(rest[0] ?? '');
  else if (mode === 'write') await write(rest[0]!, Number(rest[1]), Number(rest[2]));
  else if (mode === 'read') await read(Number(rest[0]), rest[1]!);
  else throw new Error(`unknown mode ${mode}`);
} catch (error) {
  if (!(error instanceof MemoryDamaged)) throw error;
  process.stderr.write(`error: memory: ${error.message}\n`);
  process.exitCode = 2;
}

async function search(query: string): Promise<void> {
  const store = await open();
  process.stdout.write(JSON.stringify((await store.search(query, 5)).map((hit) => hit.id)));
}

async function write(tag: string, rounds: number, until: number): Promise<void> {
  for (let round = 0; round < rounds && Date.now() < until; round++) {
    const store = await open();
    const tokens = [0, 1, 2, 3].map((i) => `${tag}r${round}i${i}`);
    const ids = await store.addMany(tokens.map((token, i) => ({ text: `${token} note about topic ${i}` })));
    process.stdout.write(ids.map((id, i) => `added ${id} ${tokens[i]}\n`).join(''));
    const forgotten = await store.forget(ids.slice(0, 2));
    process.stdout.write(forgotten.map((id) => `forgot ${id}\n`).join(''));
    await store.close();
  }
}

async function read(until: number, stop: string): Promise<void> {
  for (let round = 0; Date.now() < until && !existsSync(stop); round++) {
    const store = await open();
    await store.search(`note about topic ${round % 4}`, 5);
    await store.list();
    await store.close();
  }
}
