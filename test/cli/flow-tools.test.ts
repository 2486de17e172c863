import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadFlowFile, parseFlowObject } from '../../src/flow/load.js';
import { runCli } from '../support/run-cli.js';

// Runs the built CLI (npx tsc -p . first), as a user would, on the flows in test/fixtures/flows/.
const FLOWS = 'test/fixtures/flows';
const research = `${FLOWS}/research.flow.json`;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'meta-agent-flow-tools-'));
});

describe('meta-agent validate on flows', () => {
  it('passes a clean flow with a count line like a graph’s, and exits 0', async () => {
    const { code, stdout } = await runCli(['validate', research]);
    expect(code).toBe(0);
    expect(stdout).toBe(`${research}: 4 nodes, 0 errors, 0 warnings\n`);
  });

  it('names the cycle, as a finding about the whole flow, and exits 1', async () => {
    const { code, stdout } = await runCli(['validate', `${FLOWS}/cycle.flow.json`]);
    expect(code).toBe(1);
    expect(stdout).toContain(
      'error    (flow): the dependencies form a cycle: a → b → a\n         hint: a flow is evaluated in dependency order',
    );
    expect(stdout).toContain(`${FLOWS}/cycle.flow.json: 3 nodes, 1 error, 0 warnings`);
  });

  it('suggests the node a misspelt dependency meant', async () => {
    const { code, stdout } = await runCli(['validate', `${FLOWS}/typo.flow.json`]);
    expect(code).toBe(1);
    expect(stdout).toContain(
      'error    draft: it depends on "outlin", which is not a node; did you mean "outline"?',
    );
  });

  it('gives the line and column of invalid JSON (exit 1), and exits 2 for a file it cannot read', async () => {
    const path = join(dir, 'broken.flow.json');
    writeFileSync(path, '{\n  "nodes": [\n    { "name": "a", "prompt": "A." },\n  ]\n}\n');
    const broken = await runCli(['validate', path]);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain('broken.flow.json: invalid JSON at line 4, column 3: unexpected "]"');
    const missing = await runCli(['validate', join(dir, 'missing.flow.json')]);
    expect(missing.code).toBe(2);
    expect(missing.stdout).toContain('missing.flow.json: no such file');
  });

  it('checks graphs and flows in one call, and reports them as JSON in the same shape', async () => {
    const { code, stdout } = await runCli([
      'validate',
      'test/fixtures/graphs/simple_example.csv',
      research,
      `${FLOWS}/cycle.flow.json`,
      '--json',
    ]);
    expect(code).toBe(1);
    expect(JSON.parse(stdout)).toEqual([
      expect.objectContaining({ file: 'test/fixtures/graphs/simple_example.csv', nodes: 4 }),
      { file: research, nodes: 4, findings: [], warnings: [] },
      {
        file: `${FLOWS}/cycle.flow.json`,
        nodes: 3,
        findings: [
          expect.objectContaining({ severity: 'error', message: expect.stringContaining('a → b → a') }),
        ],
        warnings: [],
      },
    ]);
  });
});

describe('meta-agent show on flows', () => {
  it('summarizes the flow: size, depth, inputs, and each node with what it runs after and what checks it', async () => {
    const { code, stdout } = await runCli(['show', research]);
    expect(code).toBe(0);
    expect(stdout).toBe(
      [
        `research (${research})`,
        '  Outline a short report on a topic, gather facts, draft it and review the dr…',
        '4 nodes, depth 3 (longest dependency chain), inputs: topic, audience; 0 errors, 0 warnings',
        '',
        'outline',
        '    Outline a one-page report on $db.topic$ for $db.audience$.',
        'facts  [schema]',
        '    List three facts about $db.topic$ as JSON: {"facts": ["…"]}.',
        'draft  [dependencies: outline, facts]',
        '    Write the report.',
        '    compose: Outline: $out.outline$ Facts: $out.facts$ $prompt$',
        'review  [dependencies: draft]  [code] [fallback]',
        '    Rate the draft from 1 to 10; answer with the number only.',
        '',
      ].join('\n'),
    );
  });

  it('shows a flow with lint errors too, marking the dependency that is missing', async () => {
    const { code, stdout } = await runCli(['show', `${FLOWS}/typo.flow.json`]);
    expect(code).toBe(0);
    expect(stdout).toContain(
      '2 nodes, depth 1 (longest dependency chain), inputs: none; 1 error, 0 warnings',
    );
    expect(stdout).toContain('draft  [dependencies: outlin (missing)]');
  });
});

describe('meta-agent export on flows', () => {
  it('writes DOT to stdout by default: a box per node, an arrow per dependency', async () => {
    const { code, stdout, stderr } = await runCli(['export', research]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^digraph "research" \{\n/);
    expect(stdout).toContain('  "outline" -> "draft";\n  "facts" -> "draft";\n  "draft" -> "review";\n');
  });

  it('takes the format from the -o extension and says what it wrote', async () => {
    const html = join(dir, 'research.html');
    const page = await runCli(['export', research, '-o', html]);
    expect(page.code).toBe(0);
    expect(page.stderr).toBe(`wrote ${html} (html, 4 nodes)\n`);
    expect(readFileSync(html, 'utf8')).toMatch(/^<!doctype html>[\s\S]*<svg[\s\S]*id="graph-data"/);

    const mermaid = await runCli(['export', research, '-o', '-', '-f', 'mermaid']);
    expect(mermaid.stdout).toMatch(/^flowchart TD\n/);
    expect(mermaid.stdout).toContain('  n_facts --> n_draft\n');
  });

  it('writes the flow as JSON that validates back to the same flow', async () => {
    const out = join(dir, 'copy.flow.json');
    const { code } = await runCli(['export', research, '--format', 'json', '-o', out]);
    expect(code).toBe(0);
    expect(parseFlowObject(JSON.parse(readFileSync(out, 'utf8')), out)).toEqual(await loadFlowFile(research));
  });

  it('refuses CSV for a flow as a usage error (exit 2) that names the formats it has', async () => {
    const { code, stdout, stderr } = await runCli(['export', research, '-o', join(dir, 'research.csv')]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain('a flow cannot be exported as CSV, which holds AutoGRAMS graphs');
    expect(stderr).toContain('use one of: dot, svg, json, mermaid, html');
  });

  it('says in its help that it takes flows', async () => {
    const { stdout } = await runCli(['export', '--help']);
    expect(stdout).toContain('A flow (NAME.flow.json): dot, svg, json, mermaid, html.');
  });
});
