/** DOT -> SVG through Graphviz (WASM). */
import { UserError } from '../errors.js';
import type { GraphFile } from '../graph/schema.js';
import { buildDiagram, type Diagram } from './diagram.js';
import { diagramToDot } from './dot.js';
import { graphviz } from './graphviz.js';
import { assertDrawable, isDrawable, OTHER_FORMATS, sizeOf } from './layout.js';

/**
 * Lays out and renders DOT as an SVG document. Throws with Graphviz's own messages when it refuses
 * the input; the DOT we generate is always accepted, so for our graphs that is a bug, not a user error.
 * Graphviz running out of memory or stack is a UserError: the graph is too large for it.
 */
export async function renderSvg(dot: string): Promise<string> {
  const viz = await graphviz();
  let result: ReturnType<typeof viz.render>;
  try {
    result = viz.render(dot, { format: 'svg' });
  } catch (error) {
    // WASM Graphviz stops with an ExitStatus (not an Error) when out of memory, or a RangeError on deep recursion.
    const reason = (error as { message?: unknown } | undefined)?.message;
    throw new UserError(
      `Graphviz stopped while drawing the graph${typeof reason === 'string' ? ` (${reason})` : ''}; the graph is too large for it`,
      1,
      OTHER_FORMATS,
    );
  }
  if (result.status === 'failure') {
    const messages = result.errors.map((e) => e.message).join('; ');
    throw new Error(`Graphviz could not render the graph: ${messages || 'no reason given'}`);
  }
  return result.output;
}

/** Renders an already built drawing; refuses (UserError) one too large to draw. */
export async function renderDiagram(diagram: Diagram): Promise<string> {
  assertDrawable(diagram.name, sizeOf(diagram));
  return renderSvg(diagramToDot(diagram));
}

/** Renders a graph file as an SVG document; refuses (UserError) a graph too large to draw. */
export function toSvg(file: GraphFile): Promise<string> {
  return renderDiagram(buildDiagram(file));
}

/**
 * True when SVG and HTML export can draw the graph, false when they would refuse it as too large; for
 * a caller that writes those beside other formats and would rather leave them out.
 */
export function canDraw(file: GraphFile): boolean {
  return isDrawable(sizeOf(buildDiagram(file)));
}
