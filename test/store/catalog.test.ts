import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { catalogInFolder, type CatalogEntry } from '../../src/store/catalog.js';

// The catalog a server keeps on disk: one file per conversation, rewritten at every turn.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'meta-agent-catalog-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The pid of a process that has ended. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid!;
}

function entry(id: string, history: string): CatalogEntry {
  const now = new Date().toISOString();
  return { id, graph: 'helpdesk', owner: 'local', created: now, updated: now, history };
}

describe('the catalog in a folder', () => {
  it("removes a crashed server's half-written entry when it writes that entry, and keeps every turn's", async () => {
    const crashed = `.ann.json.${deadPid()}.0badc0de.tmp`;
    await writeFile(join(dir, crashed), '{"id": "ann", "gra');
    const catalog = catalogInFolder(dir);
    for (const history of ['first', 'second', 'third']) await catalog.put(entry('ann', history));
    expect(await readdir(dir)).toEqual(['ann.json']);
    expect(JSON.parse(await readFile(join(dir, 'ann.json'), 'utf8'))).toMatchObject({ history: 'third' });
    expect(await catalogInFolder(dir).byHistory('local', 'third')).toBe('ann');
  });
});
