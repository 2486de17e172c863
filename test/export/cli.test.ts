import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { toDot } from '../../src/export/dot.js';
import { graphFromCsv } from '../../src/graph/csv.js';
import { runCli } from '../support/run-cli.js';
import { FRACTION_AGENT_CSV, quizGraph } from './fixtures.js';

// Runs the built CLI (npx tsc -p . first), as a user would.
let dir: string;
let quizPath: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'meta-agent-export-'));
  quizPath = join(dir, 'quiz.autogram.json');
  writeFileSync(quizPath, JSON.stringify(quizGraph));
});

describe('meta-agent export', () => {
  it('writes DOT to stdout by default', async () => {
    const { code, stdout, stderr } = await runCli(['export', quizPath]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toBe(toDot(quizGraph));
  });

  it('takes the format from the -o extension and says what it wrote', async () => {
    const out = join(dir, 'quiz.html');
    const { code, stdout, stderr } = await runCli(['export', quizPath, '-o', out]);
    expect(code).toBe(0);
    expect(stdout).toBe('');
    expect(stderr).toBe(`wrote ${out} (html, 5 nodes)\n`);
    expect(readFileSync(out, 'utf8')).toMatch(/^<!doctype html>[\s\S]*<svg[\s\S]*id="graph-data"/);
  });

  it('exports an AutoGRAMS spreadsheet as a Mermaid flowchart and as SVG', async () => {
    const mermaid = await runCli(['export', FRACTION_AGENT_CSV, '--format', 'mermaid']);
    expect(mermaid.code).toBe(0);
    expect(mermaid.stdout).toMatch(/^flowchart TD\n/);
    expect(mermaid.stdout).toContain('  n_m3 -->|"The user gave a correct<br/>anwer"| n_m4\n');
    const svg = await runCli(['export', FRACTION_AGENT_CSV, '-f', 'SVG']);
    expect(svg.code).toBe(0);
    expect(svg.stdout).toContain('<title>m3</title>');
  });

  it('writes a spreadsheet that reads back to the same nodes', async () => {
    const out = join(dir, 'quiz.csv');
    const { code } = await runCli(['export', quizPath, '-o', out]);
    expect(code).toBe(0);
    expect(graphFromCsv(readFileSync(out, 'utf8'), { name: 'quiz', source: out }).file.nodes).toEqual(
      quizGraph.nodes,
    );
  });

  it('writes a JavaScript graph’s code to a spreadsheet as it is, warning that it reads back as Python', async () => {
    const path = join(dir, 'push.autogram.json');
    const nodes = [
      { name: 'start1', action: 'code', instruction: 'xs = [1]; xs.push(2)', transitions: ['quit'] },
    ];
    writeFileSync(path, JSON.stringify({ nodes }));
    const { code, stdout, stderr } = await runCli(['export', path, '-f', 'csv']);
    expect(code).toBe(0);
    expect(stdout).toBe('Name,Action,Instruction,Transitions\nstart1,code,xs = [1]; xs.push(2),quit\n');
    expect(stderr).toContain(
      'warning: a CSV file is read back as Python, AutoGRAMS\' language, but the code, conditions or call arguments of node "start1" are JavaScript',
    );
    writeFileSync(path, JSON.stringify({ config: { language: 'python' }, nodes }));
    const python = await runCli(['export', path, '-f', 'csv']);
    expect(python.stdout).toContain('start1,python_function,');
    expect(python.stderr).not.toContain('read back as Python');
    expect((await runCli(['export', '--help'])).stdout).toContain(
      "a Python graph's code nodes are written as\npython_function",
    );
  });

  it('rejects an unknown format with exit code 2 and the list of formats', async () => {
    const { code, stdout, stderr } = await runCli(['export', quizPath, '--format', 'png']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      'error: unknown format "png"\nhint: use one of: dot, svg, json, csv, mermaid, html\n',
    );
  });

  it('asks for --format when the output extension names no format', async () => {
    const { code, stderr } = await runCli(['export', quizPath, '-o', join(dir, 'quiz.txt')]);
    expect(code).toBe(2);
    expect(stderr).toContain('cannot tell the format from');
    expect(stderr).toContain('hint: pass --format; use one of: dot, svg, json, csv, mermaid, html');
  });

  it('reports a missing graph file as a usage error', async () => {
    const { code, stderr } = await runCli(['export', join(dir, 'nope.autogram.json')]);
    expect(code).toBe(2);
    expect(stderr).toContain('nope.autogram.json: no such file');
  });

  it('shows examples in its help', async () => {
    const { code, stdout } = await runCli(['export', '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('Usage: meta-agent export [options] <graph>');
    expect(stdout).toContain('$ meta-agent export tutor.autogram.json -o tutor.html');
    expect(stdout).toContain('Formats: dot, svg, json, csv, mermaid, html.');
  });
});
