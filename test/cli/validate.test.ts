import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'meta-agent-validate-'));
});

function graphFile(name: string, nodes: unknown[]): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ name: 'g', nodes }));
  return path;
}

describe('meta-agent validate', () => {
  it('passes both AutoGRAMS example spreadsheets', async () => {
    for (const [name, count] of [
      ['simple_example.csv', 4],
      ['fraction_agent.csv', 23],
    ] as const) {
      const { code, stdout } = await runCli(['validate', `test/fixtures/graphs/${name}`]);
      expect(code).toBe(0);
      expect(stdout).toContain(`${name}: ${count} nodes, 0 errors`);
    }
  });

  it('prints each error with its node and hint, a count line, and exits 1', async () => {
    const path = graphFile('broken.autogram.json', [
      { name: 'ask', action: 'chat', transitions: ['anser'] },
      { name: 'answer', action: 'chat', transitions: ['ask'] },
    ]);
    const { code, stdout } = await runCli(['validate', path]);
    expect(code).toBe(1);
    expect(stdout).toContain(
      'error    ask: transition to missing node "anser"\n         hint: did you mean "answer"?',
    );
    expect(stdout).toContain(`${path}: 2 nodes, 1 error, 1 warning`);
  });

  it('shows where an AIPL template does not parse, the caret under its column', async () => {
    const path = join(dir, 'aipl.autogram.json');
    writeFileSync(
      path,
      JSON.stringify({
        name: 'g',
        config: { aipl: {} },
        nodes: [
          { name: 'hi', action: 'chat', instruction: 'Say hi\n((x.y > 1) oops\n)', transitions: ['hi'] },
        ],
      }),
    );
    const { code, stdout } = await runCli(['validate', path]);
    expect(code).toBe(1);
    expect(stdout).toContain(
      [
        'error    hi: instruction is not a valid AIPL template: line 2, column 12: expected a line break (a block\'s text starts on the line after its condition), found "o"',
        '         hint: 2 | ((x.y > 1) oops',
        '                 |            ^',
      ].join('\n'),
    );
  });

  it('exits 0 when there are only warnings', async () => {
    const path = graphFile('warned.autogram.json', [
      { name: 'a', action: 'chat', transitions: ['a'] },
      { name: 'orphan', action: 'chat', transitions: ['a'] },
    ]);
    const { code, stdout } = await runCli(['validate', path]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^warning {2}orphan: is unreachable/m);
  });

  it('exits 2 for a file it cannot read, and 1 for one it reads that is not a graph', async () => {
    const missing = await runCli(['validate', join(dir, 'missing.autogram.json')]);
    expect(missing.code).toBe(2);
    expect(missing.stdout).toContain('missing.autogram.json: no such file');

    const path = join(dir, 'bad.autogram.json');
    writeFileSync(path, '{\n  "nodes": [,]\n}');
    const bad = await runCli(['validate', path]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain('invalid JSON at line 2, column 13: unexpected ","');
  });

  it('names the node of an unknown action and exits 1', async () => {
    const path = graphFile('action.autogram.json', [{ name: 'greet', action: 'chatt' }]);
    const { code, stdout } = await runCli(['validate', path]);
    expect(code).toBe(1);
    expect(stdout).toContain('nodes[0] (greet).action: invalid value "chatt"; expected one of chat,');
  });

  it('prints findings as JSON on request', async () => {
    const path = graphFile('json.autogram.json', [{ name: 'a', action: 'chat', transitions: ['b'] }]);
    const { code, stdout } = await runCli(['validate', path, '--json']);
    expect(code).toBe(1);
    expect(JSON.parse(stdout)).toMatchObject({
      file: path,
      nodes: 1,
      findings: [{ severity: 'error', node: 'a', message: 'transition to missing node "b"' }],
    });
  });

  it('explains itself with examples in --help', async () => {
    const { code, stdout } = await runCli(['validate', '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('$ meta-agent validate tutor.autogram.json');
    expect(stdout).toContain('Exit code');
  });
});
