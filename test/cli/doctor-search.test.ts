/** `meta-agent doctor` names the search provider `google` uses, and tries it with one query. */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closedUrl } from '../support/openai-server.js';
import { runCli } from '../support/run-cli.js';
import { startSearxngServer, type SearxngServer } from '../support/searxng-server.js';
import { startBraveServer } from '../support/brave-server.js';

let searxng: SearxngServer | undefined;
afterEach(async () => {
  await searxng?.close();
  searxng = undefined;
});

/** Doctor with scripted models, so that only its search line depends on the test. */
let script: string;
beforeAll(async () => {
  script = join(await mkdtemp(join(tmpdir(), 'doctor-search-')), 'rules.json');
  await writeFile(script, JSON.stringify({ rules: [{ reply: 'A' }] }));
});

async function searchLine(env: Record<string, string> = {}): Promise<string | undefined> {
  const result = await runCli(['doctor', '--provider', 'scripted', '--script', script], { env });
  return result.stdout.split('\n').find((line) => /^\w+\s+search\s/.test(line));
}

describe('doctor: search', () => {
  it('names the SearXNG instance and what one query found', async () => {
    searxng = await startSearxngServer({
      results: () => [{ title: 'SearXNG', url: 'https://searxng.example', content: 'a metasearch engine' }],
    });
    expect(await searchLine({ META_AGENT_SEARCH_URL: searxng.url })).toBe(
      `ok    search      SearXNG at ${searxng.url} answered 1 result(s) for "SearXNG"; runs offer google`,
    );
  });

  it('names Brave when only its key is set', async () => {
    const brave = await startBraveServer('k', () => [
      { title: 'SearXNG', url: 'https://searxng.example', description: 'a metasearch engine' },
    ]);
    try {
      expect(await searchLine({ BRAVE_SEARCH_API_KEY: 'k', META_AGENT_BRAVE_SEARCH_URL: brave.url })).toBe(
        `ok    search      Brave Search at ${new URL(brave.url).origin} answered 1 result(s) for "SearXNG"; runs offer google`,
      );
    } finally {
      await brave.close();
    }
  });

  it('says google is not offered without a provider, and fails for one that does not answer', async () => {
    expect(await searchLine()).toBe(
      'ok    search      no search provider configured (META_AGENT_SEARCH_URL or BRAVE_SEARCH_API_KEY); runs do not offer google',
    );
    const url = new URL(await closedUrl()).origin;
    expect(await searchLine({ META_AGENT_SEARCH_URL: url })).toBe(
      `fail  search      SearXNG at ${url} could not be reached (ECONNREFUSED) — fix: check that ` +
        'META_AGENT_SEARCH_URL is the address of a running SearXNG instance with JSON enabled',
    );
  });
});
