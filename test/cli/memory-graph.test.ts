import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { closedUrl } from '../support/openai-server.js';
import { runCli } from '../support/run-cli.js';

const NOTEBOOK = 'test/fixtures/memory/notebook.autogram.json';

let env: Record<string, string>;
let workspace: string;

beforeAll(async () => {
  env = { META_AGENT_PROBE_URLS: await closedUrl() };
  workspace = join(await mkdtemp(join(tmpdir(), 'memory-graph-')), 'ws');
});

const call = (expression: string) =>
  runCli(['call', NOTEBOOK, expression, '--workspace', workspace], { env });

describe('an autogram with config.memory', () => {
  it('lets code nodes add memories and search them, across processes', async () => {
    const first = await call('note("The staging database lives on host db-stg-04.")');
    expect(first.stdout).toBe('true\n');
    // No embedding server here: memory says once that it goes by words.
    expect(first.stderr.match(/note: memory searches by words only: /g)).toHaveLength(1);
    expect((await call('note("Lunch on Fridays is pizza.")')).stdout).toBe('true\n');
    const found = await call('find("which host is the staging database on db-stg-04")');
    expect(found.code).toBe(0);
    expect(JSON.parse(found.stdout)[0]).toBe('The staging database lives on host db-stg-04. [call]');
    expect(await readdir(join(workspace, '.meta-agent', 'memory'))).toEqual(['notebook']);
  });

  it('turns a bad call into an error inside the code, not a crash', async () => {
    const result = await call('bad_k("anything")');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/memory\.search: call memory\.search\(query, k\?\) with k from 1 to 100/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
