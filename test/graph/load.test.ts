import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { loadGraphFile, saveGraphFile } from '../../src/graph/load.js';
import { graphFileSchema } from '../../src/graph/schema.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'meta-agent-load-'));
});

function write(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const fixture = (name: string) => new URL(`../fixtures/graphs/${name}`, import.meta.url).pathname;

describe('loadGraphFile', () => {
  it('reads a native graph and names it after the file when it has no name', async () => {
    const path = write('tutor.autogram.json', JSON.stringify({ nodes: [{ name: 'a', action: 'chat' }] }));
    const { file, warnings } = await loadGraphFile(path);
    expect(file.name).toBe('tutor');
    expect(file.nodes[0]).toMatchObject({ name: 'a', action: 'chat', transitions: [] });
    expect(warnings).toEqual([]);
  });

  it('reads an AutoGRAMS spreadsheet by its extension', async () => {
    const { file } = await loadGraphFile(fixture('fraction_agent.csv'));
    expect(file.name).toBe('fraction_agent');
    expect(file.nodes).toHaveLength(23);
  });

  it('reports a missing file as unreadable (exit code 2)', async () => {
    await expect(loadGraphFile(join(dir, 'none.autogram.json'))).rejects.toMatchObject({
      message: expect.stringContaining('none.autogram.json: no such file'),
      exitCode: 2,
    });
  });

  it('reports bad JSON with its line and column', async () => {
    const path = write('bad.json', '{\n  "nodes": [\n    {"name": "a",}\n  ]\n}');
    await expect(loadGraphFile(path)).rejects.toMatchObject({
      message: expect.stringContaining('bad.json: invalid JSON at line 3, column 18: unexpected "}"'),
      exitCode: 2,
    });
  });

  it('refuses a graph with no nodes', async () => {
    const path = write('empty.autogram.json', JSON.stringify({ nodes: [] }));
    await expect(loadGraphFile(path)).rejects.toThrow(/nodes: a graph needs at least one node/);
  });

  it('names the node and the allowed values for an unknown action', async () => {
    const path = write(
      'g.json',
      JSON.stringify({
        nodes: [
          { name: 'a', action: 'chat' },
          { name: 'ask', action: 'chatt' },
        ],
      }),
    );
    await expect(loadGraphFile(path)).rejects.toThrow(
      /nodes\[1\] \(ask\)\.action: invalid value "chatt"; expected one of chat, chat_exact, chat_suffix, thought/,
    );
  });

  it('warns about fields it does not know instead of dropping them silently', async () => {
    const path = write(
      'g.json',
      JSON.stringify({ nodes: [{ name: 'a', action: 'chat', transition: ['a'] }] }),
    );
    const { warnings } = await loadGraphFile(path);
    expect(warnings).toEqual([
      `${path}: unknown field nodes[0] (a).transition is ignored (did you mean "transitions"?)`,
    ]);
  });

  it('refuses a file type it does not know', async () => {
    await expect(loadGraphFile(write('g.yaml', 'nodes: []'))).rejects.toMatchObject({ exitCode: 2 });
  });
});

describe('saveGraphFile', () => {
  const file = graphFileSchema.parse({
    name: 'g',
    nodes: [{ name: 'a', action: 'chat', transitions: ['a'] }],
  });

  it('writes native JSON that points at the published schema and loads back equal', async () => {
    const path = join(dir, 'g.autogram.json');
    await saveGraphFile(path, file);
    const json = JSON.parse(readFileSync(path, 'utf8')) as { $schema: string };
    expect(json.$schema).toMatch(/schema\/autogram\.schema\.json$/);
    expect(readFileSync(join(dir, json.$schema), 'utf8')).toContain('"$schema"');
    const { $schema: _, ...loaded } = (await loadGraphFile(path)).file;
    expect(loaded).toEqual(file);
  });

  it('writes a spreadsheet for a .csv path, saying that it cannot keep the config', async () => {
    const path = join(dir, 'g.csv');
    expect(await saveGraphFile(path, file)).toEqual([expect.stringMatching(/config .* not saved/)]);
    expect((await loadGraphFile(path)).file.nodes).toEqual(file.nodes);
  });

  it('leaves no temporary files behind', async () => {
    await saveGraphFile(join(dir, 'g.autogram.json'), file);
    await saveGraphFile(join(dir, 'g.autogram.json'), file);
    expect(readdirSync(dir)).toEqual(['g.autogram.json']);
  });

  it('reports a folder it cannot write to', async () => {
    await expect(saveGraphFile(join(dir, 'missing', 'g.json'), file)).rejects.toThrow(/cannot write/);
  });
});
