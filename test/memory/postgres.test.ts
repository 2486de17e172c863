/**
 * Long-term memory in PostgreSQL: vectors through pgvector (PGlite's build, served over the wire
 * protocol: test/support/pgvector.ts says why), words through full-text search, fused as the files fuse
 * them; and, on the tests' real embedded PostgreSQL, which has no pgvector, the one line that says so.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { openDatabase } from '../../src/postgres/database.js';
import type { Embedder } from '../../memory/embedding.js';
import type { Memory } from '../../memory/memory.js';
import type { PostgresMemory } from '../../memory/postgres.js';
import { openPostgresMemory } from '../../memory/postgres.js';
import { MemoryStore, type MemoryHit } from '../../memory/store.js';
import { hashEmbedding } from '../../src/llm/scripted.js';
import { weakEmbedder, wordEmbedder } from '../support/embedders.js';
import { freshDatabase } from '../support/postgres.js';
import { startPgvector, type PgvectorServer } from '../support/pgvector.js';

let server: PgvectorServer;
beforeAll(async () => {
  server = await startPgvector();
});
afterAll(async () => {
  await server?.close();
});

const FACTS = [
  'The vault code is 7431; keep it secret.',
  'Ticket ZX-9921 is blocked by the flaky build on the release branch.',
  'Apples are red and bananas are yellow.',
  'The deployment runs every Tuesday at noon.',
  'Maria prefers tea over coffee in the morning.',
];

let opened = 0;

/** A memory in a namespace of its own (unless named), noting what it is told; closed after `work`. */
async function withMemory<T>(
  work: (memory: PostgresMemory & { notices: string[] }) => Promise<T>,
  options: { namespace?: string; embedder?: Embedder } = {},
): Promise<T> {
  const notices: string[] = [];
  const memory = await openPostgresMemory(server.url, {
    namespace: options.namespace ?? `ns-${++opened}`,
    embedder: options.embedder ?? wordEmbedder(),
    onNotice: (message) => notices.push(message),
  });
  try {
    return await work(Object.assign(memory, { notices }));
  } finally {
    await memory.close();
  }
}

/** What a person sees of a hit: everything but its id, which each store draws at random. */
function shown(hits: MemoryHit[]) {
  return hits.map(({ id: _id, at: _at, similarity, ...hit }) => ({
    ...hit,
    similarity: similarity === undefined ? undefined : Math.round(similarity * 100) / 100,
  }));
}

describe('memory in PostgreSQL with pgvector', () => {
  it('finds what was added by meaning and by words, and another opening sees it', async () => {
    const ids = await withMemory(
      async (memory) => {
        const ids = await memory.addMany(FACTS.map((text, i) => ({ text, meta: { step: String(i) } })));
        const [hit] = await memory.search('when does the deployment run', 1);
        expect(hit).toMatchObject({ id: ids[3], text: FACTS[3], meta: { step: '3' }, embedded: true });
        expect(hit!.via).toEqual(['meaning', 'words']);
        return ids;
      },
      { namespace: 'shared-facts' },
    );

    await withMemory(
      async (again) => {
        expect((await again.list()).map((item) => item.id)).toEqual(ids);
        expect((await again.search('when does the deployment run', 1))[0]!.id).toBe(ids[3]);
        expect(await again.stats()).toEqual({
          database: server.url,
          items: 5,
          embedded: 5,
          model: 'hashed-words',
          dimensions: 256,
        });
      },
      { namespace: 'shared-facts' },
    );
  });

  // The words side ranks by ts_rank here and by BM25 in the files: alike for queries whose words are
  // each in one memory or none, which is where the fusion itself is compared.
  it('fuses as the files do: the same hits, scores and sides for the same memories and queries', async () => {
    const folder = join(await mkdtemp(join(tmpdir(), 'memory-')), 'ns');
    const files = await MemoryStore.open({ folder, embedder: wordEmbedder() });
    await files.addMany(FACTS.map((text) => ({ text })));
    const queries = [
      'when does deployment run',
      'what is blocking ZX-9921',
      'vault code',
      'what does Maria drink',
      'bananas',
      'something nobody said',
    ];
    await withMemory(async (memory) => {
      await memory.addMany(FACTS.map((text) => ({ text })));
      for (const query of queries)
        expect(shown(await memory.search(query, 3)), query).toEqual(shown(await files.search(query, 3)));
    });
  });

  it('puts a memory naming the query identifier first even when embeddings blur everything', async () => {
    await withMemory(
      async (memory) => {
        const ids = await memory.addMany(FACTS.map((text) => ({ text })));
        const [hit] = await memory.search('ZX-9921', 1);
        expect(hit).toMatchObject({ id: ids[1], via: ['meaning', 'words'] });
      },
      { embedder: weakEmbedder() },
    );
  });

  it('keeps namespaces apart, and lists them', async () => {
    await withMemory(async (a) => a.add('Maria prefers tea over coffee'), { namespace: 'team-a' });
    await withMemory(
      async (b) => {
        expect(await b.search('tea coffee Maria', 5)).toEqual([]);
        expect(await b.forgetMatching('tea')).toEqual([]);
        await b.add('The build runs on Tuesdays');
        expect((await b.list()).map((item) => item.text)).toEqual(['The build runs on Tuesdays']);
        expect(await b.namespaces()).toEqual(expect.arrayContaining(['team-a', 'team-b']));
      },
      { namespace: 'team-b' },
    );
    await withMemory(
      async (a) => {
        expect((await a.search('tea coffee Maria', 5)).map((hit) => hit.text)).toEqual([
          'Maria prefers tea over coffee',
        ]);
        // Meaning finds a neighbour whatever the query: only ever one of this namespace.
        expect((await a.search('build Tuesdays', 5)).map((hit) => hit.text)).toEqual([
          'Maria prefers tea over coffee',
        ]);
      },
      { namespace: 'team-a' },
    );
  });

  it('forgets by id and by a text it contains, in any case', async () => {
    await withMemory(async (memory) => {
      const ids = await memory.addMany(FACTS.map((text) => ({ text })));
      expect(await memory.forget([ids[0]!, 'nothere', ids[0]!])).toEqual([ids[0]]);
      expect(await memory.forgetMatching('TUESDAY')).toEqual([ids[3]]);
      expect((await memory.list()).map((item) => item.id)).toEqual([ids[1], ids[2], ids[4]]);
      expect(await memory.search('vault code 7431', 5)).not.toContainEqual(
        expect.objectContaining({ id: ids[0] }),
      );
    });
  });

  it('returns as many neighbours as asked, past pgvector’s default search breadth', async () => {
    await withMemory(async (memory) => {
      await memory.addMany(
        Array.from({ length: 150 }, (_, i) => ({ text: `note number ${i} about things` })),
      );
      const hits = await memory.search('a question', 100);
      expect(hits).toHaveLength(100);
      expect(hits.every((hit) => hit.via.includes('meaning'))).toBe(true);
    });
  });

  it('follows the files’ rule for another embedder: words alone, said once, until reindex', async () => {
    const namespace = 'changing-embedder';
    const ids = await withMemory((memory) => memory.addMany(FACTS.map((text) => ({ text }))), { namespace });
    await withMemory(
      async (memory) => {
        const hits = await memory.search('deployment schedule', 5);
        expect(hits.map((hit) => hit.via)).toEqual([['words']]);
        await memory.search('tea', 5);
        expect(memory.notices).toEqual([
          'memory searches by words only: its memories were embedded with hashed-words and the embedder is weak (`meta-agent memory reindex` embeds them again)',
        ]);
        await memory.add('Deploys need two approvals');
        expect(await memory.stats()).toMatchObject({
          items: 6,
          embedded: 5,
          model: 'hashed-words',
          dimensions: 256,
        });

        expect(await memory.reindex()).toBe(6);
        expect(await memory.stats()).toMatchObject({ items: 6, embedded: 6, model: 'weak', dimensions: 16 });
        expect((await memory.search('ZX-9921', 1))[0]).toMatchObject({
          id: ids[1],
          via: ['meaning', 'words'],
        });
      },
      { namespace, embedder: weakEmbedder() },
    );
    // Another namespace keeps its own shape beside it, each with its own index.
    await withMemory(async (other) => {
      await other.add('The deployment runs every Tuesday at noon.');
      expect((await other.search('deployment', 1))[0]!.via).toEqual(['meaning', 'words']);
    });
  });

  it('goes by words when the embedder gives vectors of other dimensions than the namespace’s', async () => {
    const namespace = 'other-dimensions';
    await withMemory((memory) => memory.add('Apples are red'), { namespace });
    const shorter: Embedder = {
      modelName: 'hashed-words',
      embed: async (texts) => ({ vectors: texts.map(() => [1, 0, 0]) }),
    };
    await withMemory(
      async (memory) => {
        expect((await memory.search('apples', 1))[0]!.via).toEqual(['words']);
        expect(memory.notices).toEqual([
          'memory searches by words only: the embedder hashed-words gave a vector of 3 dimensions where 256 were expected',
        ]);
      },
      { namespace, embedder: shorter },
    );
  });

  it('searches vectors of more dimensions than pgvector indexes, row by row', async () => {
    const wide: Embedder = {
      modelName: 'wide',
      embed: async (texts) => ({
        vectors: texts.map((text) => [...hashEmbedding(text), ...Array<number>(1800).fill(0.001)]),
      }),
    };
    await withMemory(
      async (memory) => {
        const ids = await memory.addMany(FACTS.map((text) => ({ text })));
        expect(await memory.stats()).toMatchObject({ dimensions: 2056, embedded: 5 });
        expect((await memory.search('when does the deployment run', 1))[0]).toMatchObject({
          id: ids[3],
          via: ['meaning', 'words'],
        });
      },
      { embedder: wide },
    );
  });

  it('is what openMemory-style callers get as a Memory: add and search through the interface', async () => {
    await withMemory(async (memory: Memory) => {
      const id = await memory.add('Ticket ZX-9921 is blocked');
      expect((await memory.search('ZX-9921', 1))[0]!.id).toBe(id);
    });
  });
});

describe('memory in a PostgreSQL without pgvector', () => {
  it('says in one line that the server has no pgvector, and what to do', async () => {
    const url = await freshDatabase();
    const error = await openPostgresMemory(url, { namespace: 'shared' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UserError);
    const { message, hint } = error as UserError;
    expect(message).toMatch(
      /^the PostgreSQL server at postgres:\/\/.+ has no pgvector, which memory needs for its vectors$/,
    );
    expect(hint).toMatch(
      /^install it on the server \(Debian and Ubuntu: apt install postgresql-\d+-pgvector;/,
    );
    expect(hint).toContain('or keep memory in files: leave out --database and META_AGENT_DATABASE_URL');
    // Nothing was made: the tables wait for a server that can hold them.
    const db = await openDatabase(url);
    try {
      const { rows } = await db.pool.query(`select to_regclass('meta_agent.memories') as table`);
      expect(rows[0]).toEqual({ table: null });
    } finally {
      await db.close();
    }
  });
});
