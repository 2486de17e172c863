import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { beforeAll, describe, expect, it } from 'vitest';
import { toSvgAndHtml } from '../../src/export/html.js';
import { autogramsConfig, graphFromCsv, graphToCsv } from '../../src/graph/csv.js';
import { lintGraph } from '../../src/aipl/lint.js';
import { graphFileSchema, type GraphFile } from '../../src/graph/schema.js';
import { VersionedGraph } from '../../src/graph/versioned.js';
import { randomGraph } from '../export/fixtures.js';
import { fileOf } from '../support/agents.js';
import { runCli } from '../support/run-cli.js';

/** Texts a spreadsheet would run as formulas, and texts that look like the escape of one. */
const FORMULAS = ['=HYPERLINK("http://x.example","click")', '+1+2', '-2+3', '@SUM(A1)', '\t=1', '\r=1'];
const LOOKALIKES = ["'=already quoted", "''", "'tis", "'", "'-5", '-0.5', '+7', 'plain'];

function graphWithTexts(texts: readonly string[]): GraphFile {
  return graphFileSchema.parse({
    name: 'agent',
    config: autogramsConfig(),
    nodes: [
      {
        name: '=start',
        action: 'chat',
        instruction: texts[0],
        transitions: ['@next', ...texts.slice(1).map((_, i) => `n${i}`)],
        transitionQuestion: '-which one?',
        transitionChoices: texts.map((t) => `choice ${t}`).map((c, i) => (i === 0 ? '=A1' : c)),
      },
      { name: '@next', action: 'chat', instruction: '+more', notes: '-note', transitions: ['quit'] },
      ...texts.slice(1).map((text, i) => ({ name: `n${i}`, action: 'chat', instruction: text })),
    ],
  });
}

function dataCells(csv: string): string[] {
  return (parse(csv) as string[][]).slice(1).flat();
}

describe('CSV export against formula injection', () => {
  it('writes every cell a spreadsheet would run as a formula with a leading apostrophe', () => {
    const cells = dataCells(graphToCsv(graphWithTexts(FORMULAS)).text);
    const dangerous = cells.filter((c) => /^[=+\-@\t\r]/.test(c) && !/^[+-]?\d+(\.\d+)?$/.test(c));
    expect(dangerous).toEqual([]);
    for (const text of FORMULAS) expect(cells).toContain(`'${text}`);
    expect(cells).toContain("'=start");
    expect(cells).toContain("'@next,n0,n1,n2,n3,n4");
  });

  it('reads neutralized cells back exactly as they were, apostrophes written on purpose included', () => {
    const file = graphWithTexts([...FORMULAS, ...LOOKALIKES]);
    const csv = graphToCsv(file).text;
    expect(graphFromCsv(csv, { name: 'agent', source: 'agent.csv' }).file).toEqual(file);
    const cells = dataCells(csv);
    expect(cells).toContain("''=already quoted");
    expect(cells).toContain("'''");
    expect(cells).toContain("'tis");
    expect(cells).toContain("'");
  });

  it('leaves plain numbers and ordinary text as they are, so AutoGRAMS reads them unchanged', () => {
    const cells = dataCells(graphToCsv(graphWithTexts(['-0.5', '+7', 'plain', "'tis"])).text);
    expect(cells).toEqual(expect.arrayContaining(['-0.5', '+7', 'plain', "'tis"]));
  });

  it('writes cells raw when neutralizing is turned off', () => {
    const cells = dataCells(graphToCsv(graphWithTexts(FORMULAS), { neutralizeFormulas: false }).text);
    for (const text of FORMULAS) expect(cells).toContain(text);
  });
});

describe('control characters in node names', () => {
  const named = (name: string) =>
    fileOf([
      { name: 'start1', action: 'chat', transitions: [name] },
      { name, action: 'chat', transitions: ['start1'] },
    ]);

  it('are lint errors that name the character and show the name escaped', () => {
    for (const [name, code] of [
      ['a\u0000b', 'U+0000'],
      ['bell\u0007', 'U+0007'],
      ['del\u007f', 'U+007F'],
    ] as const) {
      const errors = lintGraph(named(name)).filter((f) => f.severity === 'error');
      expect(errors).toHaveLength(1);
      expect(errors[0]!.message).toBe(
        `invalid node name: ${JSON.stringify(name)} contains the control character ${code}; names are printable text`,
      );
    }
  });

  it('are refused by the edit path self.addNode takes, leaving the graph as it was', () => {
    const graph = new VersionedGraph(
      fileOf([
        { name: 'start1', action: 'chat', transitions: ['start1'] },
        { name: 'ok', action: 'chat', conditionInterjection: 'the user says ok', transitions: ['start1'] },
      ]),
    );
    expect(() =>
      graph.apply({ op: 'add', node: { name: 'evil\u0000', action: 'chat' } }, { by: 'start1' }),
    ).toThrow(/control character U\+0000/);
    expect(() =>
      graph.apply({ op: 'update', name: 'ok', patch: { name: 'o\u0000k' } }, { by: 'start1' }),
    ).toThrow(/control character U\+0000/);
    expect(graph.version).toBe(0);
    expect(graph.nodes().map((n) => n.name)).toEqual(['start1', 'ok']);
  });
});

describe('drawing large graphs', () => {
  let dir: string;
  let hugePath: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'meta-agent-large-'));
    hugePath = join(dir, 'huge.autogram.json');
    writeFileSync(hugePath, JSON.stringify(randomGraph(5001)));
  });

  it('draws a random graph of 500 nodes, two arrows each, as SVG and HTML', async () => {
    const { svg, html } = await toSvgAndHtml(randomGraph(500));
    expect(svg).toMatch(/^<\?xml[\s\S]*<svg[\s\S]*<\/svg>\s*$/);
    expect(svg.match(/<g id="ag&#45;node&#45;\d+" class="node">/g)).toHaveLength(500);
    expect(svg.match(/<g id="edge\d+" class="edge">/g)).toHaveLength(1000);
    expect(html).toContain('<title>step_499</title>');
  });

  it('refuses SVG and HTML past what Graphviz can draw, in one line naming the formats that work', async () => {
    const expected =
      'error: "random_5001" is too large to draw as SVG or HTML: 5,001 boxes and 10,002 arrows, where Graphviz draws at most 5,000 boxes and 20,000 arrows\n' +
      'hint: export it as DOT, JSON, CSV or Mermaid instead (--format dot|json|csv|mermaid)\n';
    const svg = await runCli(['export', hugePath, '--format', 'svg']);
    expect(svg).toEqual({ code: 1, stdout: '', stderr: expected });
    const htmlPath = join(dir, 'huge.html');
    const html = await runCli(['export', hugePath, '-o', htmlPath]);
    expect(html).toEqual({ code: 1, stdout: '', stderr: expected });
    expect(existsSync(htmlPath)).toBe(false);
  });

  it('still exports such a graph as DOT, laid out for sfdp', async () => {
    const { code, stdout } = await runCli(['export', hugePath, '--format', 'dot']);
    expect(code).toBe(0);
    expect(stdout).toContain('layout=sfdp');
    expect(stdout.match(/ -> /g)).toHaveLength(10002);
  });
});
