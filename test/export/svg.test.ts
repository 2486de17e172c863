import { describe, expect, it } from 'vitest';
import { toSvg } from '../../src/export/svg.js';
import { loadGraphFile } from '../../src/graph/load.js';
import type { GraphFile } from '../../src/graph/schema.js';
import { awkwardGraph, controlGraph, FRACTION_AGENT_CSV, quizGraph } from './fixtures.js';

/** Node groups of a Graphviz SVG: element id and title, with XML character references decoded. */
function svgNodes(svg: string): { id: string; title: string }[] {
  return [...svg.matchAll(/<g id="([^"]*)" class="node">\s*<title>([^<]*)<\/title>/g)].map((m) => ({
    id: decodeXml(m[1]!),
    title: decodeXml(m[2]!),
  }));
}

function decodeXml(text: string): string {
  return text
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)))
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');
}

async function expectEveryNode(graph: GraphFile): Promise<void> {
  const svg = await toSvg(graph);
  expect(svg).toContain('<svg');
  const groups = svgNodes(svg);
  graph.nodes.forEach((node, i) => expect(groups).toContainEqual({ id: `ag-node-${i}`, title: node.name }));
}

describe('SVG export', () => {
  it('contains a node group for every node, with a stable id and the node name as title', async () => {
    await expectEveryNode(quizGraph);
  });

  it('keeps names with quotes, markup and backslashes intact', async () => {
    const svg = await toSvg(awkwardGraph);
    expect(svgNodes(svg).map((n) => n.id)).toEqual([
      'ag-node-0',
      'ag-node-1',
      'ag-node-2',
      'ag-mark-0',
      'ag-mark-1',
    ]);
    expect(svgNodes(svg)).toContainEqual({ id: 'ag-node-2', title: 'a\\b' });
    expect(svg).toContain('Say &quot;hello&quot; &amp; &lt;wave&gt;');
  });

  it('is valid XML for a graph with control characters in its names, which lint refuses but export does not check', async () => {
    const svg = await toSvg(controlGraph);
    expect(svg).not.toMatch(/(?![\t\n\r])\p{Cc}/u);
    expect(svgNodes(svg)).toContainEqual({ id: 'ag-node-1', title: 'a\u2400b' });
  });

  it('renders every node of the AutoGRAMS fraction tutor', async () => {
    await expectEveryNode((await loadGraphFile(FRACTION_AGENT_CSV)).file);
  });
});
