import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { newState, saveState } from '../../src/engine/state.js';
import { loadGraphFile, parseGraphJson } from '../../src/graph/load.js';
import { graphFileSchema } from '../../src/graph/schema.js';
import { VersionedGraph } from '../../src/graph/versioned.js';
import { runCli } from '../support/run-cli.js';

let dir: string;
let statePath: string;
let graph: VersionedGraph;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'meta-agent-history-'));
  graph = new VersionedGraph(
    graphFileSchema.parse({
      name: 'tutor',
      nodes: [
        { name: 'ask', action: 'chat', instruction: 'Ask a question', transitions: ['ask'] },
        { name: 'grow', action: 'code', instruction: 'self.addNode({})', transitions: ['ask'] },
      ],
    }),
  );
  graph.apply({ op: 'add', node: { name: 'hint', action: 'chat', transitions: ['ask'] } }, { by: 'grow' });
  graph.apply({ op: 'update', name: 'ask', patch: { instruction: 'Ask a harder question' } }, { by: 'grow' });
  statePath = join(dir, 'chat-state.json');
  writeFileSync(statePath, saveState({ ...newState(graph), graph: graph.toJSON() }));
});

describe('meta-agent history', () => {
  it('lists the versions of a self-edited graph saved in a conversation state', async () => {
    const { code, stdout } = await runCli(['history', statePath]);
    expect(code).toBe(0);
    expect(stdout).toContain(`tutor (${statePath}): version 2, 3 nodes`);
    const rows = stdout.trim().split('\n').slice(1);
    expect(rows[0]).toMatch(/^version\s+time\s+by\s+op\s+node$/);
    expect(rows[1]).toMatch(/^\s+0\s+-\s+-\s+loaded\s+\(2 nodes\)$/);
    expect(rows[2]).toMatch(/^\s+1\s+\d{4}-\d\d-\d\dT\S+Z\s+grow\s+add\s+hint$/);
    expect(rows[3]).toMatch(/^\s+2\s+\S+\s+grow\s+update\s+ask$/);
  });

  it('shows a graph file as version 0 only', async () => {
    const { code, stdout } = await runCli(['history', 'test/fixtures/graphs/simple_example.csv']);
    expect(code).toBe(0);
    expect(stdout).toContain('simple_example (test/fixtures/graphs/simple_example.csv): version 0, 4 nodes');
    expect(stdout.trim().split('\n')).toHaveLength(3);
  });

  it('diffs two versions with field-level before and after', async () => {
    const { code, stdout } = await runCli(['history', statePath, '--diff', '0', '2']);
    expect(code).toBe(0);
    expect(stdout).toContain(
      [
        'from version 0 to version 2:',
        '  ~ ask  changed: instruction',
        '      instruction',
        '        - "Ask a question"',
        '        + "Ask a harder question"',
        '  + hint  added',
      ].join('\n'),
    );
    expect((await runCli(['history', statePath, '--diff', '1', '1'])).stdout).toBe(
      'from version 1 to version 1: no differences\n',
    );
  });

  it('writes the graph as it was at a version', async () => {
    const out = join(dir, 'v1.autogram.json');
    const { code, stderr } = await runCli(['history', statePath, '--revert', '1', '-o', out]);
    expect(code).toBe(0);
    expect(stderr).toContain(`wrote ${out}: the graph at version 1 of 2`);
    const { $schema: _, ...written } = (await loadGraphFile(out)).file;
    expect(written).toEqual(graph.fileAt(1));
    const printed = await runCli(['history', statePath, '--revert', '1', '-o', '-']);
    expect(printed.code).toBe(0);
    const { $schema: __, ...shown } = parseGraphJson(printed.stdout, 'stdout').file;
    expect(shown).toEqual(graph.fileAt(1));
  });

  it('refuses --revert without -o, and versions that do not exist, as usage errors', async () => {
    expect(await runCli(['history', statePath, '--revert', '1'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('-o FILE'),
    });
    expect(await runCli(['history', statePath, '--diff', '0', '7'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('no version "7"; this graph has versions 0 to 2'),
    });
  });

  it('says so when a conversation state holds no edited graph', async () => {
    const path = join(dir, 'static-state.json');
    writeFileSync(path, saveState(newState(new VersionedGraph(graph.fileAt(0)))));
    const { code, stderr } = await runCli(['history', path]);
    expect(code).toBe(2);
    expect(stderr).toContain('holds no graph history');
  });

  it('explains itself with examples in --help', async () => {
    expect((await runCli(['history', '--help'])).stdout).toContain('--revert 2 -o v2.autogram.json');
  });
});
