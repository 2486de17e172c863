/**
 * Export benchmark: how long drawing a graph takes, as `design` writes its `.svg` and `.html` and
 * `export --format svg|html` writes one of them (`toSvgAndHtml`: one Graphviz layout, then the page).
 *
 * The graphs are random, which is the hard case for a layered layout: n nodes, each a chat node with
 * two transitions to nodes picked at random (seeded, so every run draws the same graphs), a transition
 * question and a labelled choice per arrow. Sizes 50 to 500 are the designer's and a self-editing
 * agent's range; 1,000 to 5,000 show the force-directed layout larger drawings get (src/export/layout.ts),
 * up to the largest one SVG export accepts. Graphviz is started (its WASM compiled) before timing.
 * The goal: 500 nodes in under 5 s.
 *
 * Run: `npx tsc -p . && node dist/bench/export.bench.js` (or `node bench/run.js export`)
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { buildDiagram } from '../src/export/diagram.js';
import { graphviz } from '../src/export/graphviz.js';
import { toSvgAndHtml } from '../src/export/html.js';
import { layoutFor, sizeOf, type LayoutKind } from '../src/export/layout.js';
import { randomGraph } from '../test/export/fixtures.js';
import { printTable, quantiles, verdict } from './stats.js';

/** The goal: a 500-node graph drawn in under 5 s. */
export const GOAL = { nodes: 500, seconds: 5 } as const;

const CASES: readonly { nodes: number; runs: number }[] = [
  { nodes: 50, runs: 5 },
  { nodes: 100, runs: 5 },
  { nodes: 200, runs: 5 },
  { nodes: 500, runs: 5 },
  { nodes: 1000, runs: 3 },
  { nodes: 5000, runs: 3 },
];

export interface ExportBenchRow {
  nodes: number;
  arrows: number;
  layout: LayoutKind;
  runs: number;
  medianS: number;
  p95S: number;
  /** Whether the row met the goal; only the goal's row has one. */
  met?: boolean;
}

/** Runs the benchmark, prints a table and returns the figures. */
export async function runExportBench(): Promise<ExportBenchRow[]> {
  await graphviz();
  await toSvgAndHtml(randomGraph(10));
  const rows: ExportBenchRow[] = [];
  for (const { nodes, runs } of CASES) {
    const graph = randomGraph(nodes);
    const size = sizeOf(buildDiagram(graph));
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      await toSvgAndHtml(graph);
      times.push((performance.now() - started) / 1000);
    }
    const { median, p95 } = quantiles(times);
    const row: ExportBenchRow = {
      nodes,
      arrows: size.arrows,
      layout: layoutFor(size),
      runs,
      medianS: median,
      p95S: p95,
    };
    if (nodes === GOAL.nodes) row.met = median < GOAL.seconds;
    rows.push(row);
  }
  printTable(
    `export benchmark: SVG + HTML of random graphs (2 labelled arrows a node), Node ${process.version}`,
    ['nodes', 'arrows', 'layout', 'runs', 'median s', 'p95 s', 'goal', ''],
    rows.map((r) => [
      String(r.nodes),
      String(r.arrows),
      r.layout,
      String(r.runs),
      r.medianS.toFixed(2),
      r.p95S.toFixed(2),
      r.met === undefined ? '' : `< ${GOAL.seconds} s`,
      r.met === undefined ? '' : verdict(r.met),
    ]),
    0,
  );
  return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runExportBench();
