import { describe, expect, it } from 'vitest';
import { toDot } from '../../src/export/dot.js';
import { DRAWING_LIMITS, isDrawable, layoutFor } from '../../src/export/layout.js';
import { canDraw, toSvg } from '../../src/export/svg.js';
import { UserError } from '../../src/errors.js';
import { DESIGNER_GRAPH, quizGraph, randomGraph } from './fixtures.js';
import { loadGraphFile } from '../../src/graph/load.js';

/** The attributes of the DOT `graph [...]` line. */
function graphLine(dot: string): string {
  return dot.split('\n').find((line) => line.startsWith('  graph ['))!;
}

describe('layout by size', () => {
  it('lays small graphs out with dot as it comes: the designer graph carries no extra attributes', async () => {
    const designer = (await loadGraphFile(DESIGNER_GRAPH)).file;
    for (const file of [quizGraph, designer]) expect(graphLine(toDot(file))).not.toMatch(/mclimit|layout=/);
    expect(layoutFor({ boxes: 100, arrows: 150 })).toBe('layered');
  });

  it('bounds dot’s crossing reduction and placement and draws straight arrows past 150 arrows', () => {
    expect(layoutFor({ boxes: 100, arrows: 151 })).toBe('bounded');
    expect(layoutFor({ boxes: 1000, arrows: 1000 })).toBe('bounded');
    expect(graphLine(toDot(randomGraph(200)))).toMatch(/, mclimit=0\.05, nslimit=0\.1, splines=line\];$/);
  });

  it('switches to the force-directed sfdp past 1,000 arrows, in the DOT file too', () => {
    expect(layoutFor({ boxes: 1001, arrows: 10 })).toBe('spring');
    expect(graphLine(toDot(randomGraph(600)))).toMatch(/, layout=sfdp, overlap=scale, splines=line\];$/);
  });

  it('draws a graph of 1,200 nodes with a node group for each', async () => {
    const svg = await toSvg(randomGraph(1200));
    expect(svg.match(/<g id="ag&#45;node&#45;\d+" class="node">/g)).toHaveLength(1200);
    expect(svg.trimEnd()).toMatch(/<\/svg>$/);
  });

  it('refuses a drawing past the limits before starting Graphviz', async () => {
    expect(isDrawable(DRAWING_LIMITS)).toBe(true);
    expect(isDrawable({ ...DRAWING_LIMITS, arrows: DRAWING_LIMITS.arrows + 1 })).toBe(false);
    const huge = randomGraph(DRAWING_LIMITS.boxes + 1);
    expect(canDraw(huge)).toBe(false);
    expect(canDraw(randomGraph(50))).toBe(true);
    const refusal = toSvg(huge);
    await expect(refusal).rejects.toBeInstanceOf(UserError);
    await expect(refusal).rejects.toThrow(
      '"random_5001" is too large to draw as SVG or HTML: 5,001 boxes and 10,002 arrows, where Graphviz draws at most 5,000 boxes and 20,000 arrows',
    );
  });
});
