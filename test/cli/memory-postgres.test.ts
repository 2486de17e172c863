/**
 * `meta-agent memory` on PostgreSQL, end to end: the built CLI as a subprocess with --database (or
 * META_AGENT_DATABASE_URL), on PGlite's pgvector served over the wire protocol (test/support/pgvector.ts
 * says why), embeddings from a loopback OpenAI-compatible server; and on the tests' embedded server,
 * which has no pgvector, the one line that says so.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedUrl, startOpenAIServer, type OpenAIServer } from '../support/openai-server.js';
import { startPgvector, type PgvectorServer } from '../support/pgvector.js';
import { freshDatabase } from '../support/postgres.js';
import { runCli, type CliResult } from '../support/run-cli.js';

const WORDS_ONLY = 'note: memory searches by words only';

let database: PgvectorServer;
let embeddings: OpenAIServer;
let noServer: string;
beforeAll(async () => {
  [database, embeddings, noServer] = await Promise.all([startPgvector(), startOpenAIServer(), closedUrl()]);
});
afterAll(async () => {
  await Promise.all([database?.close(), embeddings?.close()]);
});

/** `meta-agent memory ...args` in a workspace of its own, its memory in the database. */
async function memory(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const workspace = await mkdtemp(join(tmpdir(), 'memory-pg-cli-'));
  return runCli(['memory', ...args, '--workspace', workspace], {
    env: { META_AGENT_PROBE_URLS: noServer, META_AGENT_DATABASE_URL: database.url, ...env },
  });
}

async function ok(args: string[], env?: Record<string, string>): Promise<CliResult> {
  const result = await memory(args, env);
  expect(result.code, result.stderr).toBe(0);
  return result;
}

interface Hit {
  id: string;
  text: string;
  via: string[];
}

describe('meta-agent memory --database', () => {
  it('imports into the database, and every workspace and worker finds the same memories', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'memory-pg-import-'));
    const file = join(folder, 'facts.txt');
    await writeFile(file, 'Ticket ZX-9921 is blocked by the flaky build\nMaria prefers tea over coffee\n');
    const models = ['--base-url', embeddings.url];
    const imported = await ok([
      'import',
      file,
      '--namespace',
      'facts',
      '--database',
      database.url,
      ...models,
    ]);
    expect(imported.stdout).toBe(`imported 2 memories from ${file} (one a line) into "facts"\n`);

    const list = JSON.parse((await ok(['list', '--namespace', 'facts', '--json'])).stdout) as Hit[];
    expect(list.map((item) => item.text)).toEqual([
      'Ticket ZX-9921 is blocked by the flaky build',
      'Maria prefers tea over coffee',
    ]);
    const search = await ok(['search', 'ZX-9921', '-k', '1', '--namespace', 'facts', '--json', ...models]);
    expect(JSON.parse(search.stdout)).toEqual([
      expect.objectContaining({ id: list[0]!.id, via: ['meaning', 'words'] }),
    ]);
    expect(search.stderr).toBe('');

    const stats = await ok(['stats', '--namespace', 'facts', ...models]);
    expect(stats.stdout).toContain(`database    ${database.url}\n`);
    expect(stats.stdout).toContain('memories    2 (2 embedded)\n');
    expect(stats.stdout).toContain('vectors     text-embedding-3-small, 8 dimensions\n');
    expect(stats.stdout).toMatch(/namespaces {2}.*facts/);
    expect(stats.stdout).not.toContain('log ');

    const forgot = await ok(['forget', '--match', 'TEA', '--namespace', 'facts', '--json']);
    expect(JSON.parse(forgot.stdout)).toEqual({ forgotten: [list[1]!.id] });
  });

  it('goes by words after the embedding model changes, and by meaning again after reindex', async () => {
    const before = ['--namespace', 'reindexed', '--base-url', embeddings.url];
    await ok(['add', 'The deploy key lives in the vault', ...before]);
    await ok(['add', 'The build runs every Tuesday at noon', ...before]);
    const wider = await startOpenAIServer({ embeddingDimensions: 12 });
    try {
      const after = ['--namespace', 'reindexed', '--base-url', wider.url, '--embedder-model', 'new-embed'];
      const stale = await ok(['search', 'deploy', 'key', '--json', ...after]);
      expect((JSON.parse(stale.stdout) as Hit[]).map((hit) => hit.via)).toEqual([['words']]);
      expect(stale.stderr).toContain(
        `${WORDS_ONLY}: its memories were embedded with text-embedding-3-small and the embedder is new-embed (\`meta-agent memory reindex\` embeds them again)`,
      );

      const reindex = await ok(['reindex', ...after]);
      expect(reindex.stdout).toBe('re-embedded 2 of 2 memories with new-embed (12 dimensions)\n');
      const fresh = await ok(['search', 'deploy', 'key', '--json', ...after]);
      expect((JSON.parse(fresh.stdout) as Hit[])[0]).toMatchObject({
        text: 'The deploy key lives in the vault',
        via: ['meaning', 'words'],
      });
      expect(fresh.stderr).toBe('');
    } finally {
      await wider.close();
    }
  });

  it('says which namespaces the database holds when one is empty', async () => {
    await ok(['add', 'something to keep', '--namespace', 'kept']);
    const result = await ok(['list', '--namespace', 'nothing-here']);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /^note: the namespace "nothing-here" holds no memories \(namespaces here: .*kept.*\)\n/,
    );
  });
});

describe('meta-agent memory on a PostgreSQL without pgvector', () => {
  it('exits 1 with one line saying the server has no pgvector and what to do, no stack trace', async () => {
    const url = await freshDatabase();
    const result = await memory(['add', 'a memory', '--database', url]);
    expect(result.code).toBe(1);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(
        /^error: the PostgreSQL server at postgres:\/\/\S+ has no pgvector, which memory needs for its vectors$/,
      ),
      expect.stringMatching(
        /^hint: install it on the server \(Debian and Ubuntu: apt install postgresql-\d+-pgvector; or run the pgvector\/pgvector image\), or keep memory in files: leave out --database and META_AGENT_DATABASE_URL$/,
      ),
    ]);
  });
});
