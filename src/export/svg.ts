/** DOT -> SVG through Graphviz (WASM). */
import type { GraphFile } from '../graph/schema.js';
import { toDot } from './dot.js';
import { graphviz } from './graphviz.js';

/**
 * Lays out and renders DOT as an SVG document. Throws with Graphviz's own messages when it refuses
 * the input; the DOT we generate is always accepted, so for our graphs that is a bug, not a user error.
 */
export async function renderSvg(dot: string): Promise<string> {
  const viz = await graphviz();
  const result = viz.render(dot, { format: 'svg' });
  if (result.status === 'failure') {
    const messages = result.errors.map((e) => e.message).join('; ');
    throw new Error(`Graphviz could not render the graph: ${messages || 'no reason given'}`);
  }
  return result.output;
}

/** Renders a graph file as an SVG document. */
export function toSvg(file: GraphFile): Promise<string> {
  return renderSvg(toDot(file));
}
