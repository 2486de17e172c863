/**
 * A writer in a process of its own, for the durability tests. Usage: writer-child.ts FOLDER MODE
 * - `write`: adds memories in batches, forgets some, closes (a snapshot, sometimes a compaction) and
 *   opens again, forever, printing each added id once its add has returned, and each id it forgets before and after; the test
 *   kills it.
 * - `search QUERY`: opens the namespace and prints the ids of the 5 closest memories as JSON.
 */
import { MemoryStore } from '../../memory/store.js';
import { wordEmbedder } from '../support/embedders.js';

const [folder, mode, query] = process.argv.slice(2);
if (!folder || !mode) throw new Error('usage: writer-child.ts FOLDER write|search [QUERY]');
const open = () => MemoryStore.open({ folder, embedder: wordEmbedder() });

if (mode === 'search') {
  const store = await open();
  process.stdout.write(JSON.stringify((await store.search(query ?? '', 5)).map((hit) => hit.id)));
} else {
  for (let round = 0; ; round++) {
    const store = await open();
    const ids = await store.addMany(
      Array.from({ length: 40 }, (_, i) => ({ text: `round ${round} memory ${i} about topic ${i % 9}` })),
    );
    process.stdout.write(ids.map((id) => `added ${id}\n`).join(''));
    const forgetting = ids.filter((_, i) => i % 3 === 0);
    process.stdout.write(forgetting.map((id) => `forgetting ${id}\n`).join(''));
    const forgotten = await store.forget(forgetting);
    process.stdout.write(forgotten.map((id) => `forgot ${id}\n`).join(''));
    await store.close();
  }
}
