/**
 * Graphs and flows drawn for the page by the export's own code, so the page shows the layout of
 * `meta-agent export --format html` and its node panel shows the same fields. Laying out is Graphviz
 * (WASM) work that takes milliseconds to seconds and holds the process while it runs, so each drawing is
 * made once and kept, under a digest of what is drawn: a served graph, and each version of a
 * self-editing agent (conversations at the same version share it).
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../canonical-json.js';
import { isUserError } from '../errors.js';
import type { Diagram } from '../export/diagram.js';
import { flowDrawing } from '../export/flow-formats.js';
import { graphDrawing, inlineSvg, type ViewerNode } from '../export/html.js';
import { renderDiagram } from '../export/svg.js';
import type { FlowFile } from '../flow/schema.js';
import type { GraphFile } from '../graph/schema.js';
import { ApiError } from './errors.js';

/** A drawing as the page takes it. */
export interface Drawing {
  /** The `<svg>` element; each node's box is the `<g class="node">` whose id its ViewerNode gives. */
  svg: string;
  nodes: ViewerNode[];
  /** Node categories, in order of first appearance. */
  categories: string[];
}

/** Drawings kept; the oldest used is dropped past this. */
const CAPACITY = 64;

export class Drawings {
  readonly #kept = new Map<string, Promise<Drawing>>();

  /** The drawing of a graph file; a 422 ApiError when it is too large to draw. */
  graph(file: GraphFile): Promise<Drawing> {
    return this.#drawn({ graph: file }, () => graphDrawing(file));
  }

  /** The drawing of a flow; a 422 ApiError when it is too large to draw. */
  flow(flow: FlowFile): Promise<Drawing> {
    return this.#drawn({ flow }, () => flowDrawing(flow));
  }

  #drawn(what: object, build: () => { diagram: Diagram; nodes: ViewerNode[] }): Promise<Drawing> {
    const key = createHash('sha256').update(canonicalJson(what)).digest('base64url');
    let drawing = this.#kept.get(key);
    if (drawing) this.#kept.delete(key);
    else drawing = draw(build);
    this.#kept.set(key, drawing);
    if (this.#kept.size > CAPACITY) this.#kept.delete(this.#kept.keys().next().value!);
    // A graph too large stays too large; any other failure is tried again next time.
    drawing.catch((error: unknown) => {
      if (!(error instanceof ApiError) && this.#kept.get(key) === drawing) this.#kept.delete(key);
    });
    return drawing;
  }
}

async function draw(build: () => { diagram: Diagram; nodes: ViewerNode[] }): Promise<Drawing> {
  const { diagram, nodes } = build();
  try {
    return { svg: inlineSvg(await renderDiagram(diagram)), nodes, categories: diagram.categories };
  } catch (error) {
    if (isUserError(error))
      throw new ApiError(422, `${error.message}; the page cannot draw it`, 'graph_too_large');
    throw error;
  }
}
