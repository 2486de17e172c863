import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { graphFromCsv, graphToCsv, autogramsConfig } from '../../src/graph/csv.js';
import { graphFileSchema, type GraphFile } from '../../src/graph/schema.js';

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
