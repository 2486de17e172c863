/**
 * `meta-agent memory` end to end: the built CLI as a subprocess, on a scratch workspace, by words alone
 * where no model server answers, and by meaning with a loopback OpenAI-compatible server's embeddings.
 */
import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { closedUrl, startOpenAIServer, testEmbedding, type OpenAIServer } from '../support/openai-server.js';
import { runCli, type CliResult, type RunCliOptions } from '../support/run-cli.js';

const WORDS_ONLY = 'note: memory searches by words only';

let noServer: string;
let workspace: string;
const servers: OpenAIServer[] = [];

beforeAll(async () => {
  noServer = await closedUrl();
});

beforeEach(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'memory-cli-'));
});

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** `meta-agent memory ...args` in the test's workspace, where no local model server can be found. */
function memory(args: string[], options: RunCliOptions = {}): Promise<CliResult> {
  return runCli(['memory', ...args, '--workspace', workspace], {
    ...options,
    env: { META_AGENT_PROBE_URLS: noServer, ...options.env },
  });
}

/** Runs `memory` and expects exit 0, showing stderr when it is not. */
async function ok(args: string[], options?: RunCliOptions): Promise<CliResult> {
  const result = await memory(args, options);
  expect(result.code, result.stderr).toBe(0);
  return result;
}

async function added(text: string, ...args: string[]): Promise<string> {
  return (await ok(['add', text, ...args])).stdout.trim();
}

async function server(options: Parameters<typeof startOpenAIServer>[0] = {}): Promise<OpenAIServer> {
  const started = await startOpenAIServer(options);
  servers.push(started);
  return started;
}

function count(text: string, part: string): number {
  return text.split(part).length - 1;
}

describe('meta-agent memory, by words (no model server)', () => {
  it('adds a memory and prints its id; search finds it, and says once why it goes by words', async () => {
    const result = await memory(['add', 'The deploy key lives in the vault under ops/deploy']);
    expect(result.code, result.stderr).toBe(0);
    const id = result.stdout.trim();
    expect(id).toMatch(/^[0-9a-f]{12}$/);
    expect(count(result.stderr, WORDS_ONLY)).toBe(1);
    expect(result.stderr).toContain('note: no model server is configured');
    await added('Maria prefers tea over coffee in the morning');

    const search = await ok(['search', 'where', 'is', 'the', 'deploy', 'key', '--json']);
    const hits = JSON.parse(search.stdout) as Array<{ id: string; via: string[] }>;
    expect(hits[0]).toMatchObject({ id, via: ['words'] });

    const shown = await ok(['search', 'tea']);
    expect(shown.stdout).toMatch(/^[0-9a-f]{12} {2}score 0\.50 {2}\(words\)/);
    expect(shown.stdout).toContain('\n  Maria prefers tea over coffee in the morning\n');
  });

  it('keeps memories across invocations; list shows id, date and first line, --limit the newest', async () => {
    const first = await added(
      'Release 2.4 ships on Friday',
      '--meta',
      'source=standup',
      '--meta',
      'team=web',
    );
    const second = (await ok(['add', '-'], { input: 'Line one of a note\nline two of it\n' })).stdout.trim();
    const list = await ok(['list']);
    expect(list.stdout).toMatch(
      new RegExp(
        `^${first} {2}\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d {2}Release 2\\.4 ships on Friday\\n${second} {2}.* {2}Line one of a note …\\n$`,
      ),
    );
    expect((await ok(['list', '--limit', '1'])).stdout).toMatch(new RegExp(`^${second} `));
    const items = JSON.parse((await ok(['list', '--json'])).stdout) as unknown[];
    expect(items).toEqual([
      expect.objectContaining({
        id: first,
        meta: { source: 'standup', team: 'web' },
        embedded: false,
      }),
      expect.objectContaining({ id: second, text: 'Line one of a note\nline two of it' }),
    ]);
  });

  it('forgets by id and by --match; an unknown id forgets nothing', async () => {
    const [a, b, c] = [
      await added('The office wifi password is hunter2'),
      await added('Old phone number: 555-0100'),
      await added('Old phone number: 555-0199'),
    ];
    const unknown = await memory(['forget', a!, 'ffffffffffff']);
    expect(unknown).toMatchObject({ code: 2 });
    expect(unknown.stderr).toContain('has no memory with the id ffffffffffff; nothing was forgotten');

    expect((await ok(['forget', a!])).stdout).toBe(`forgot 1 memory: ${a}\n`);
    expect(JSON.parse((await ok(['forget', '--match', 'OLD PHONE', '--json'])).stdout)).toEqual({
      forgotten: [b, c],
    });
    expect((await ok(['list', '--json'])).stdout).toBe('[]\n');
    const none = await memory(['forget', '--match', 'phone']);
    expect(none).toMatchObject({ code: 1 });
    expect(none.stderr).toContain('no memory in the namespace "shared" contains "phone"');
  });

  it('reports stats as JSON, with every namespace of the workspace', async () => {
    await added('one');
    await added('two', '--namespace', 'notes');
    const stats = JSON.parse((await ok(['stats', '--json'])).stdout) as Record<string, unknown>;
    expect(stats).toMatchObject({
      namespace: 'shared',
      items: 1,
      embedded: 0,
      forgottenPending: 0,
      wordsOnly: 'no embedder is configured',
      embedder: { missing: expect.stringContaining('no model server is configured') },
      namespaces: ['notes', 'shared'],
    });
    expect(stats.folder).toBe(join(workspace, '.meta-agent', 'memory', 'shared'));
    const text = await ok(['stats', '-n', 'notes']);
    expect(text.stdout).toMatch(/^namespace +notes$/m);
    expect(text.stdout).toMatch(/^memories +1 \(0 embedded\)$/m);
    expect(text.stdout).toMatch(/^search +by words only: no embedder is configured$/m);
  });

  it('keeps namespaces apart, and says which there are when one holds nothing', async () => {
    await added('only in a', '-n', 'a');
    expect((await ok(['search', 'only', '-n', 'a', '--json'])).stdout).toContain('only in a');
    const other = await ok(['search', 'only', '-n', 'b']);
    expect(other.stdout).toBe('');
    expect(other.stderr).toContain('no memory in the namespace "b" matches (namespaces here: a)');
    expect(await readdir(join(workspace, '.meta-agent', 'memory'))).toEqual(['a']);
  });

  it('refuses a namespace that is not a folder name, before anything else (exit 2)', async () => {
    const bad = await memory(['add', 'x', '--namespace', '../escape']);
    expect(bad).toMatchObject({ code: 2 });
    expect(bad.stderr).toContain('error: --namespace: "../escape" is not a namespace name');
    expect(await readdir(workspace)).toEqual([]);
  });

  it.each([
    [['add', ' '], 'error: the memory is empty'],
    [['search', '--limit', '0', 'x'], "argument '0' is invalid. expected a whole number above 0"],
    [['add', 'x', '--meta', 'novalue'], 'expected key=value'],
    [['forget'], 'error: nothing to forget'],
    [['forget', 'abc', '--match', 'x'], 'error: give ids or --match, not both'],
    [['forget', '--match', ''], 'error: --match needs some text'],
    [['import', 'no-such-file.txt'], 'error: no-such-file.txt: no such file'],
  ])('meta-agent memory %j exits 2: %s', async (args, message) => {
    const result = await memory(args);
    expect(result).toMatchObject({ code: 2 });
    expect(result.stderr).toContain(message);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('meta-agent memory import', () => {
  async function file(name: string, text: string): Promise<string> {
    const path = join(workspace, name);
    await writeFile(path, text);
    return path;
  }

  it('imports one memory a line, skipping blank lines', async () => {
    const path = await file('facts.txt', 'Apples are red.\r\n\r\nBananas are yellow.\nCherries are dark.\n');
    expect((await ok(['import', path])).stdout).toBe(
      `imported 3 memories from ${path} (one a line) into "shared"\n`,
    );
    const texts = JSON.parse((await ok(['list', '--json'])).stdout) as Array<{ text: string }>;
    expect(texts.map((item) => item.text)).toEqual([
      'Apples are red.',
      'Bananas are yellow.',
      'Cherries are dark.',
    ]);
  });

  it('imports JSONL with labels, from stdin too', async () => {
    const lines = [
      { text: 'The build runs on Tuesdays', meta: { source: 'wiki', page: 3 } },
      { text: 'Deploys need two approvals' },
    ];
    const input = `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;
    const result = JSON.parse((await ok(['import', '-', '--json'], { input })).stdout) as {
      imported: number;
      format: string;
      ids: string[];
    };
    expect(result).toMatchObject({ imported: 2, format: 'jsonl' });
    const items = JSON.parse((await ok(['list', '--json'])).stdout) as unknown[];
    expect(items).toEqual([
      expect.objectContaining({ id: result.ids[0], meta: { source: 'wiki', page: '3' } }),
      expect.objectContaining({ id: result.ids[1], text: 'Deploys need two approvals', meta: {} }),
    ]);
  });

  it.each([
    ['a line that is not JSON', '{"text": "fine"}\n{"text": "cut\n', ':2: not valid JSON'],
    ['a JSON line without text', '{"text": "fine"}\n{"body": "no text"}\n', ':2: a JSONL line needs "text"'],
    ['JSON and plain lines mixed', 'plain\n{"text": "json"}\n', ': line 2 is JSON but line 1 is not'],
    ['only blank lines', '\n  \n', ' holds no memories: every line is blank'],
  ])('refuses %s, naming the line, and imports nothing', async (_what, text, message) => {
    const path = await file('bad.jsonl', text);
    const result = await memory(['import', path]);
    expect(result).toMatchObject({ code: 2 });
    expect(result.stderr).toContain(`error: ${path}${message}`);
    expect((await ok(['list', '--json'])).stdout).toBe('[]\n');
  });

  it('shows progress on stderr for a long import', async () => {
    const path = await file(
      'many.txt',
      Array.from({ length: 1200 }, (_, i) => `fact number ${i}`).join('\n'),
    );
    const result = await ok(['import', path]);
    expect(result.stdout).toContain('imported 1200 memories');
    expect(result.stderr).toContain('importing 128 of 1200\n');
    expect(result.stderr).toContain('importing 1200 of 1200\n');
    expect(count(result.stderr, WORDS_ONLY)).toBe(1);
  });
});

describe('meta-agent memory with a model server', () => {
  const TARGET = 'The deploy key lives in the vault under ops/deploy';
  const OTHERS = ['Maria prefers tea over coffee', 'The build runs every Tuesday at noon'];

  /** A query sharing no word with TARGET whose test embedding is TARGET's: only meaning can find it. */
  function sameMeaning(dimensions = 8): string {
    const wanted = testEmbedding(TARGET, dimensions).join();
    for (let n = 0; n < 10; n++) {
      const query = `secret ${'q'.repeat(n + 1)}`;
      if (testEmbedding(query, dimensions).join() === wanted) return query;
    }
    throw new Error('no query has the same test embedding');
  }

  async function fill(url: string, embedderModel?: string): Promise<string[]> {
    const models = ['--base-url', url, ...(embedderModel ? ['--embedder-model', embedderModel] : [])];
    const ids: string[] = [];
    for (const text of [TARGET, ...OTHERS]) ids.push(await added(text, ...models));
    return ids;
  }

  it('searches by meaning with the server’s embedding model, without a words-only note', async () => {
    const embeddings = await server();
    for (const other of OTHERS) expect(testEmbedding(other).join()).not.toBe(testEmbedding(TARGET).join());
    const [target] = await fill(embeddings.url);
    const result = await ok(['search', sameMeaning(), '-k', '1', '--json', '--base-url', embeddings.url]);
    expect(JSON.parse(result.stdout)).toEqual([
      expect.objectContaining({ id: target, via: ['meaning'], similarity: 1, embedded: true }),
    ]);
    expect(result.stderr).not.toContain(WORDS_ONLY);
    const embedded = embeddings.requests.filter((request) => request.path === '/v1/embeddings');
    expect(embedded.map((request) => (request.body as { model: string }).model)).toEqual(
      Array(4).fill('text-embedding-3-small'),
    );
    expect(JSON.parse((await ok(['stats', '--json', '--base-url', embeddings.url])).stdout)).toMatchObject({
      items: 3,
      embedded: 3,
      model: 'text-embedding-3-small',
      dimensions: 8,
      embedder: { model: 'text-embedding-3-small' },
    });
  });

  it('ranks a memory that shares only function words with the query well below a real match', async () => {
    const embeddings = await server();
    const models = ['--base-url', embeddings.url];
    const unrelated = await added('The sky is blue', ...models);
    const result = await ok(['search', 'where', 'is', 'the', 'deploy', 'key', '--json', ...models]);
    const [hit] = JSON.parse(result.stdout) as Array<{ id: string; score: number; via: string[] }>;
    expect(hit).toMatchObject({ id: unrelated, via: ['meaning'] });
    expect(hit!.score).toBeLessThanOrEqual(0.5);

    const target = await added(TARGET, ...models);
    const found = await ok(['search', 'where', 'is', 'the', 'deploy', 'key', '--json', ...models]);
    const hits = JSON.parse(found.stdout) as Array<{ id: string; score: number; via: string[] }>;
    expect(hits[0]).toMatchObject({ id: target, via: expect.arrayContaining(['words']) });
    expect(hits.find((each) => each.id === unrelated)!.score).toBeLessThanOrEqual(0.5);
  });

  it('goes by words after the embedding model changes, and by meaning again after reindex', async () => {
    const before = await server();
    const [target] = await fill(before.url);
    const after = await server({ embeddingDimensions: 12 });
    const models = ['--base-url', after.url, '--embedder-model', 'new-embed'];

    const stale = await ok(['search', sameMeaning(12), '--json', ...models]);
    expect(JSON.parse(stale.stdout)).toEqual([]);
    expect(stale.stderr).toContain(
      `${WORDS_ONLY}: its memories were embedded with text-embedding-3-small and the embedder is new-embed (\`meta-agent memory reindex\` embeds them again)`,
    );

    const reindex = await ok(['reindex', ...models]);
    expect(reindex.stdout).toBe('re-embedded 3 of 3 memories with new-embed (12 dimensions)\n');
    const fresh = await ok(['search', sameMeaning(12), '-k', '1', '--json', ...models]);
    expect(JSON.parse(fresh.stdout)).toEqual([expect.objectContaining({ id: target, via: ['meaning'] })]);
    expect(fresh.stderr).toBe('');
    expect(JSON.parse((await ok(['stats', '--json', ...models])).stdout)).toMatchObject({
      model: 'new-embed',
      dimensions: 12,
      embedded: 3,
    });
  });

  it('reindex needs a model server (exit 2)', async () => {
    await added('something to embed');
    const result = await memory(['reindex']);
    expect(result).toMatchObject({ code: 2 });
    expect(result.stderr).toContain('error: no model server is configured');
  });

  it('Ctrl+C during an import stops it, keeps what was imported, and exits 130', async () => {
    const slow = await server({ latencyMs: 60_000 });
    const path = join(workspace, 'facts.txt');
    await writeFile(path, 'one fact\nanother fact\n');
    const embedding = (async () => {
      while (!slow.requests.some((request) => request.path === '/v1/embeddings')) await sleep(20);
    })();
    const result = await memory(['import', path, '--base-url', slow.url], { interruptOn: embedding });
    expect(result).toMatchObject({ code: 130 });
    expect(result.stderr).toContain('error: import interrupted: 0 memories of 2 imported');
    expect(result.stderr).toContain(`hint: the rest starts at line 1: tail -n +1 ${path}`);
    expect((await ok(['list', '--json'])).stdout).toBe('[]\n');
  });
});
