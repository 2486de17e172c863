import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { lintGraph } from '../../src/aipl/lint.js';
import { loadGraphFile } from '../../src/graph/load.js';
import { compileGraph } from '../../src/graph/view.js';

const path = fileURLToPath(new URL('../../meta/designer.autogram.json', import.meta.url));

describe('the designer graph', () => {
  it('is a valid autogram with no lint findings', async () => {
    const { file, warnings } = await loadGraphFile(path);
    expect(warnings).toEqual([]);
    expect(lintGraph(file)).toEqual([]);
  });

  it('is callable as design(description)', async () => {
    const { nodes } = compileGraph((await loadGraphFile(path)).file);
    expect(nodes.filter((n) => n.callable).map((n) => n.callable)).toEqual([
      { fn: 'design', params: ['description'] },
    ]);
  });

  it('puts every node in a stage, which is what the progress lines name', async () => {
    const { file } = await loadGraphFile(path);
    expect(file.nodes.filter((n) => !n.category).map((n) => n.name)).toEqual([]);
    expect([...new Set(file.nodes.map((n) => n.category))]).toEqual([
      'outline',
      'dot',
      'fields',
      'assemble',
      'lint',
      'repair',
      'save',
    ]);
  });

  it('bounds every re-prompt loop by a limit the host sets', async () => {
    const { file } = await loadGraphFile(path);
    const conditions = file.nodes.flatMap((n) => (n.booleanCondition ? [n.booleanCondition] : []));
    expect(conditions).toContain('dot.problems.length > 0 && dot_tries < limits.dotTries');
    expect(conditions).toContain('findings.length > 0 && repairs < limits.repairTries');
  });
});
