import { describe, expect, it } from 'vitest';
import { formatFromPath, isExportFormat } from '../../src/export/format-names.js';
import { exportGraph } from '../../src/export/formats.js';
import { graphFromCsv } from '../../src/graph/csv.js';
import { graphFileSchema } from '../../src/graph/schema.js';
import { quizGraph } from './fixtures.js';

describe('export formats', () => {
  it('reads the format from a file extension', () => {
    expect(formatFromPath('out/tutor.dot')).toBe('dot');
    expect(formatFromPath('tutor.GV')).toBe('dot');
    expect(formatFromPath('tutor.svg')).toBe('svg');
    expect(formatFromPath('tutor.autogram.json')).toBe('json');
    expect(formatFromPath('tutor.csv')).toBe('csv');
    expect(formatFromPath('tutor.mmd')).toBe('mermaid');
    expect(formatFromPath('tutor.htm')).toBe('html');
    expect(formatFromPath('tutor.png')).toBeUndefined();
    expect(formatFromPath('tutor')).toBeUndefined();
  });

  it('knows its format names', () => {
    expect(isExportFormat('mermaid')).toBe(true);
    expect(isExportFormat('png')).toBe(false);
  });

  it('writes the native file as pretty JSON that reads back to the same graph', async () => {
    const { text, warnings } = await exportGraph(quizGraph, 'json');
    expect(warnings).toEqual([]);
    expect(text).toMatch(/^\{\n {2}"format": "meta-agent\/autogram@1",\n/);
    expect(text.endsWith('}\n')).toBe(true);
    expect(graphFileSchema.parse(JSON.parse(text))).toEqual(quizGraph);
  });

  it('writes an AutoGRAMS spreadsheet that reads back to the same nodes', async () => {
    const { text } = await exportGraph(quizGraph, 'csv');
    expect(text.split('\n')[0]).toMatch(/^Name,Action,Instruction,Transitions,/);
    const back = graphFromCsv(text, { name: 'quiz', source: 'quiz.csv' }).file;
    expect(back.nodes).toEqual(quizGraph.nodes);
  });
});
