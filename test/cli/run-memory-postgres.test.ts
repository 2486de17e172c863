/**
 * `meta-agent run` with its long-term memory in PostgreSQL (META_AGENT_DATABASE_URL): what a run on one
 * machine learned, a run in another workspace (another machine's) recalls, and no memory folder is made
 * in either workspace. The database is PGlite's pgvector over the wire protocol (test/support/pgvector.ts
 * says why); a loopback server replays the commands and serves embeddings.
 */
import { access, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPgvector, type PgvectorServer } from '../support/pgvector.js';
import { promptText, startReplayServer, type ReplayStep } from '../support/replay-server.js';
import { runCli } from '../support/run-cli.js';

let database: PgvectorServer;
beforeAll(async () => {
  database = await startPgvector();
});
afterAll(async () => {
  await database?.close();
});

const PASSWORD = 'moss-green-42';

async function run(workspace: string, steps: ReplayStep[], goal: string) {
  const server = await startReplayServer(steps, 'json');
  try {
    const result = await runCli(
      [
        'run',
        '--name',
        'Keeper',
        '--yes',
        '--workspace',
        workspace,
        '--base-url',
        server.url,
        '--model',
        'gpt-4o-mini',
        '--embedder-model',
        'text-embedding-3-small',
        '--goal',
        goal,
      ],
      { env: { META_AGENT_DATABASE_URL: database.url } },
    );
    return { ...result, prompts: server.chatRequests().map(promptText) };
  } finally {
    await server.close();
  }
}

describe('meta-agent run with its memory in PostgreSQL', () => {
  // Two goal runs against PGlite's WebAssembly server, which answers one query at a time: 17 s on a
  // quiet machine, over 90 s once in a full suite beside benchmarks, so a longer limit.
  it('recalls in another workspace what a run in one learned, through the database', async () => {
    const first = await mkdtemp(join(tmpdir(), 'run-memory-pg-'));
    await writeFile(join(first, 'office.txt'), `The office Wi-Fi password is ${PASSWORD}.`);
    const learned = await run(
      first,
      [
        { name: 'read_file', args: { file: 'office.txt' } },
        { name: 'task_complete', args: { reason: 'read the office notes' } },
      ],
      'Read office.txt',
    );
    expect(learned.code, learned.stderr).toBe(0);
    await expect(access(join(first, '.meta-agent', 'memory'))).rejects.toThrow(/ENOENT/);

    const second = await mkdtemp(join(tmpdir(), 'run-memory-pg-'));
    const recalled = await run(
      second,
      [
        (prompt) => ({
          name: 'write_to_file',
          args: { file: 'wifi.txt', text: /moss-green-\d+/.exec(prompt)?.[0] ?? 'unknown' },
        }),
        { name: 'task_complete', args: { reason: 'written' } },
      ],
      'Write the office Wi-Fi password to wifi.txt',
    );
    expect(recalled.code, recalled.stderr).toBe(0);
    expect(recalled.prompts[0]).toContain(PASSWORD);
    expect(await readFile(join(second, 'wifi.txt'), 'utf8')).toBe(PASSWORD);
  }, 180_000);
});
