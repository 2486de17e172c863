import { appendFile, cp, mkdtemp, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LOG_FILE } from '../../memory/log-file.js';
import { MANIFEST_FILE } from '../../memory/manifest.js';
import { COMPACT_MIN, MemoryDamaged, MemoryStore, type OpenOptions } from '../../memory/store.js';
import { downEmbedder, weakEmbedder, wordEmbedder } from '../support/embedders.js';

let folder: string;
beforeEach(async () => {
  folder = join(await mkdtemp(join(tmpdir(), 'memory-')), 'ns');
});

const stores: MemoryStore[] = [];
afterEach(() => void stores.splice(0));

async function open(options: Partial<OpenOptions> = {}): Promise<MemoryStore & { notices: string[] }> {
  const notices: string[] = [];
  const store = await MemoryStore.open({
    folder,
    embedder: wordEmbedder(),
    onNotice: (message) => notices.push(message),
    ...options,
  });
  stores.push(store);
  return Object.assign(store, { notices });
}

const FACTS = [
  'The vault code is 7431; keep it secret.',
  'Ticket ZX-9921 is blocked by the flaky build on the release branch.',
  'Apples are red and bananas are yellow.',
  'The deployment runs every Tuesday at noon.',
  'Maria prefers tea over coffee in the morning.',
];

describe('memory store', () => {
  it('finds what was added by meaning and by words, and keeps it across opening again', async () => {
    const store = await open();
    const ids = await store.addMany(FACTS.map((text, i) => ({ text, meta: { step: String(i) } })));
    expect(ids).toHaveLength(5);
    const [hit] = await store.search('when does the deployment run', 1);
    expect(hit).toMatchObject({ text: FACTS[3], meta: { step: '3' }, embedded: true });
    expect(hit!.via).toContain('meaning');
    await store.close();

    const again = await open();
    expect((await again.list()).map((item) => item.text)).toEqual(FACTS);
    expect((await again.search('when does the deployment run', 1))[0]!.id).toBe(ids[3]);
    expect(await again.stats()).toMatchObject({
      items: 5,
      embedded: 5,
      model: 'hashed-words',
      dimensions: 256,
    });
  });

  it('finds an exact identifier even when the embeddings cannot tell memories apart', async () => {
    const store = await open({ embedder: weakEmbedder() });
    await store.addMany(FACTS.map((text) => ({ text })));
    for (let i = 0; i < 40; i++)
      await store.add(`Routine note ${i}: nothing happened on the release branch.`);
    const [hit] = await store.search('what about zx-9921?', 3);
    expect(hit!.text).toBe(FACTS[1]);
    expect(hit!.via).toContain('words');
  });

  it('works by words alone when the embedder is down, and says so once', async () => {
    const embedder = downEmbedder();
    const store = await open({ embedder });
    await store.addMany(FACTS.map((text) => ({ text })));
    await store.add('One more thing about the vault.');
    const [hit] = await store.search('vault code', 1);
    expect(hit!.text).toBe(FACTS[0]);
    expect(hit!.via).toEqual(['words']);
    expect(embedder.calls).toBe(1);
    expect(store.notices).toEqual([
      'memory searches by words only: no embeddings (connect ECONNREFUSED 127.0.0.1:11434)',
    ]);
    expect(await store.stats()).toMatchObject({
      items: 6,
      embedded: 0,
      wordsOnly: expect.stringContaining('ECONNREFUSED'),
    });
  });

  it('never mixes embedding models: another model searches by words until reindex', async () => {
    const first = await open({ embedder: wordEmbedder('model-a') });
    await first.addMany(FACTS.map((text) => ({ text })));
    await first.close();

    const second = await open({ embedder: wordEmbedder('model-b') });
    expect((await second.search('deployment Tuesday', 1))[0]!.via).toEqual(['words']);
    expect(second.notices[0]).toMatch(/embedded with model-a and the embedder is model-b .*reindex/);
    await second.add('A new memory while the models differ.');
    expect(await second.stats()).toMatchObject({ model: 'model-a', embedded: 5, items: 6 });

    expect(await second.reindex()).toBe(6);
    expect(await second.stats()).toMatchObject({ model: 'model-b', embedded: 6, items: 6 });
    expect((await second.search('deployment Tuesday', 1))[0]!.via).toContain('meaning');
    const third = await open({ embedder: wordEmbedder('model-b') });
    expect(third.notices).toEqual([]);
    expect((await third.search('deployment Tuesday', 1))[0]).toMatchObject({ text: FACTS[3] });
  });

  it('leaves forgotten memories out of counts and compacts them away past the threshold', async () => {
    const store = await open();
    const ids = await store.addMany(
      Array.from({ length: 200 }, (_, i) => ({ text: `memory number ${i} about topic ${i % 7}` })),
    );
    expect(await store.forget([ids[0]!, 'no-such-id'])).toEqual([ids[0]]);
    expect(await store.stats()).toMatchObject({ items: 199, forgottenPending: 1 });
    expect((await store.search('memory number 0 about topic 0', 5)).map((hit) => hit.id)).not.toContain(
      ids[0],
    );

    const many = ids.slice(1, Math.max(COMPACT_MIN, 60));
    await store.forget(many);
    const stats = await store.stats();
    expect(stats).toMatchObject({
      items: 200 - 1 - many.length,
      forgottenPending: 0,
      snapshotRecords: stats.records,
    });
    const log = (await readFile(join(folder, LOG_FILE), 'utf8')).trim().split('\n');
    expect(log).toHaveLength(1 + stats.items);
    expect(log.join('\n')).not.toContain('"forget"');

    const reopened = await open();
    expect((await reopened.list()).map((item) => item.id)).toEqual(ids.slice(1 + many.length));
    expect((await reopened.search('topic 3', 5)).map((hit) => hit.id)).toEqual(
      (await store.search('topic 3', 5)).map((hit) => hit.id),
    );
  });

  it('saves its indexes whole after a bulk add, once, and amortizes single adds', async () => {
    const store = await open();
    await store.addMany(Array.from({ length: 1200 }, (_, i) => ({ text: `bulk note ${i}` })));
    expect(await store.stats()).toMatchObject({ records: 1200, snapshotRecords: 1200 });
    expect((await readdir(folder)).filter((name) => name.endsWith('.hnsw'))).toHaveLength(1);
    await store.add('one more');
    await store.close();
    // 1 unsaved record of 1,201 is not worth rewriting every index file for; opening replays it.
    expect(await store.stats()).toMatchObject({ records: 1201, snapshotRecords: 1200 });
  });

  it('forgets by matching text, in any case', async () => {
    const store = await open();
    await store.addMany(FACTS.map((text) => ({ text })));
    const forgotten = await store.forgetMatching('VAULT');
    expect(forgotten).toHaveLength(1);
    expect((await store.list()).map((item) => item.text)).not.toContain(FACTS[0]);
  });

  it('ignores a last log line a crash cut short, and appends after it cleanly', async () => {
    const store = await open();
    await store.addMany(FACTS.map((text) => ({ text })));
    await appendFile(join(folder, LOG_FILE), '{"op":"add","id":"half","te');
    const reopened = await open();
    expect(await reopened.list()).toHaveLength(5);
    await reopened.add('After the crash.');
    const third = await open();
    expect((await third.list()).map((item) => item.text).at(-1)).toBe('After the crash.');
  });

  it('refuses a log with a damaged line, naming it', async () => {
    const store = await open();
    await store.addMany(FACTS.map((text) => ({ text })));
    const lines = (await readFile(join(folder, LOG_FILE), 'utf8')).split('\n');
    lines[2] = '{"op":"add","id":7}';
    await writeFile(join(folder, LOG_FILE), lines.join('\n'));
    await expect(open()).rejects.toThrow(MemoryDamaged);
    await expect(open()).rejects.toThrow(
      /items\.jsonl cannot be read: its log line 3 is not a memory record/,
    );
  });

  it('refuses a log line of any shape but a record, field by field', async () => {
    const store = await open();
    await store.addMany(FACTS.map((text) => ({ text })));
    const lines = (await readFile(join(folder, LOG_FILE), 'utf8')).split('\n');
    const add = { op: 'add', id: 'x1', text: 'a memory', meta: {}, at: '2026-01-01T00:00:00Z' };
    const bad = [
      { ...add, extra: 1 },
      { ...add, meta: { source: 3 } },
      { ...add, meta: ['a'] },
      { ...add, meta: null },
      { ...add, id: '' },
      { ...add, id: 'x'.repeat(65) },
      { ...add, text: 5 },
      { ...add, model: null },
      { ...add, vector: 12 },
      { op: 'add', id: 'x1', text: 'no meta', at: '2026-01-01T00:00:00Z' },
      { op: 'forget', id: 'x1', text: 'more' },
      { op: 'forget', id: '' },
      { op: 'drop', id: 'x1' },
      ['op', 'add'],
      'add',
    ];
    for (const line of bad) {
      await writeFile(
        join(folder, LOG_FILE),
        [...lines.slice(0, 2), JSON.stringify(line), ...lines.slice(2)].join('\n'),
      );
      await expect(open(), JSON.stringify(line)).rejects.toThrow(/its log line 3 is not a memory record/);
    }
    await writeFile(
      join(folder, LOG_FILE),
      [
        ...lines.slice(0, 2),
        JSON.stringify({ ...add, meta: { source: 'chat' }, model: 'm' }),
        ...lines.slice(2),
      ].join('\n'),
    );
    expect((await (await open()).list()).map((item) => item.meta)).toContainEqual({ source: 'chat' });
  });

  it('refuses a manifest that is not one', async () => {
    const store = await open();
    await store.add('something');
    await writeFile(join(folder, MANIFEST_FILE), '{"format":"meta-agent/memory@1","space":"l2"}');
    await expect(open()).rejects.toThrow(/manifest\.json is not a memory manifest/);
  });

  it('rejects text it cannot keep', async () => {
    const store = await open();
    await expect(store.add('   ')).rejects.toThrow('a memory cannot be empty');
    await expect(store.add('x'.repeat(1_000_001))).rejects.toThrow(/at most 1,000,000 characters/);
  });

  it('stores a memory without words to embed by its words alone, and keeps the embedder', async () => {
    const store = await open();
    await store.add('!!! ???');
    await store.add('The vault code is 7431.');
    expect(await store.stats()).toMatchObject({ items: 2, embedded: 1 });
    expect(store.notices).toEqual([]);
  });

  it('sees what another store appended to the same namespace', async () => {
    const one = await open();
    const two = await open();
    await one.add('written by the first');
    await two.add('written by the second');
    expect((await one.list()).map((item) => item.text)).toEqual([
      'written by the first',
      'written by the second',
    ]);
    expect((await two.search('first', 1))[0]!.text).toBe('written by the first');
  });

  it('reads a log another store compacted as new, though it may have the inode of the old one', async () => {
    const reader = await open();
    const writer = await open();
    const compact = async () => {
      const ids = await writer.addMany(
        Array.from({ length: COMPACT_MIN }, (_, i) => ({ text: `gone ${i}` })),
      );
      await writer.forget(ids);
    };
    const inode = async () => (await stat(join(folder, LOG_FILE))).ino;
    const [first] = await writer.addMany(Array.from({ length: 10 }, (_, i) => ({ text: `first note ${i}` })));
    await compact();
    expect(await reader.list()).toHaveLength(10);
    const seen = await inode();
    // The compacted log no longer starts as the one the reader read: its records sit elsewhere.
    await writer.forget([first!]);
    // ext4 hands freed inodes to later new files: a few compactions on, the log has this one again.
    for (let compaction = 0; compaction < 1 || (compaction < 12 && (await inode()) !== seen); compaction++)
      await compact();
    // Longer than the log the reader read, so only its header tells the two apart.
    await writer.addMany(Array.from({ length: 30 }, (_, i) => ({ text: `later note ${i}` })));
    // The case this is about; a file system that never reuses inodes passes it anyway.
    if ((await inode()) !== seen) console.info('the log did not get its old inode back');
    expect((await reader.list()).map((item) => item.text)).toEqual(
      (await writer.list()).map((item) => item.text),
    );
  });

  it('opens a folder of format 1 as it is, and at its next snapshot keeps each vector once', async () => {
    // Written by the store before format 2: 30 memories in a snapshot, then a forget and 3 adds.
    await cp(fileURLToPath(new URL('../fixtures/memory/format-1', import.meta.url)), folder, {
      recursive: true,
    });
    const sizeOf = async () => {
      let bytes = 0;
      for (const name of await readdir(folder)) bytes += (await stat(join(folder, name))).size;
      return bytes;
    };
    const old = await open();
    expect(await old.stats()).toMatchObject({ items: 32, embedded: 32, snapshotRecords: 30, records: 34 });
    expect((await old.search('ERR_4417 disk', 3))[0]).toMatchObject({ via: ['meaning', 'words'] });

    await old.addMany(Array.from({ length: 1_000 }, (_, i) => ({ text: `later note ${i}` })));
    const found = (await old.search('ERR_4417 disk', 3)).map((hit) => hit.id);
    const log = await readFile(join(folder, LOG_FILE), 'utf8');
    expect(log.split('\n')[0]).toContain('"format":"meta-agent/memory-log@2"');
    expect(log).not.toContain('"vector"');
    // Each vector is on disk once, in the index: the folder is not much more than the index file.
    const index = (await readdir(folder)).find((name) => name.endsWith('.hnsw'))!;
    expect(await sizeOf()).toBeLessThan(1.5 * (await stat(join(folder, index))).size);

    const reopened = await open();
    expect(reopened.notices).toEqual([]);
    expect(await reopened.stats()).toMatchObject({ items: 1_032, embedded: 1_032 });
    expect((await reopened.search('ERR_4417 disk', 3)).map((hit) => hit.id)).toEqual(found);
  });

  it('opens a folder with nothing in it as an empty namespace, without creating anything', async () => {
    const store = await open();
    expect(await store.search('anything', 5)).toEqual([]);
    expect(await store.list()).toEqual([]);
    await store.close();
    await expect(readdir(folder)).rejects.toThrow(/ENOENT/);
  });
});
