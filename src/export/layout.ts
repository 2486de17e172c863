/**
 * How Graphviz lays a drawing out, chosen by its size, and how large a drawing it can lay out at all.
 *
 * dot's layered layout reads best, but its work grows much faster than the graph: on random graphs with
 * two labelled arrows a node it took 0.2 s at 50 nodes, 2 s at 100, 34 s at 200 and over 5 minutes at
 * 500, and ran out of memory at 5,000; the time goes to ordering nodes within layers (`mclimit`),
 * placing them (`nslimit`) and routing curved arrows.
 * So a drawing is laid out in one of three ways:
 *
 * - `layered`: dot as it comes, for small drawings (every graph the designer makes);
 * - `bounded`: dot with those three bounded (fewer crossing-reduction passes, a capped number of
 *   placement iterations, straight arrows): still layered, 500 nodes in under 2 s;
 * - `spring`: sfdp's force-directed layout with overlaps scaled away, for what dot cannot do in
 *   seconds: 5,000 nodes in about 3 s. It draws no category clusters, and the DOT leaves arrow labels
 *   out, which sfdp would put over boxes; the HTML page still lists each node's transitions.
 *
 * Past `DRAWING_LIMITS` Graphviz (WASM) runs out of memory, so such a drawing is refused with a message
 * naming the formats that still work. The thresholds were measured with `bench/export.bench.ts`.
 */
import { UserError } from '../errors.js';
import type { Diagram } from './diagram.js';

/** The three ways to lay a drawing out; see the module comment. */
export type LayoutKind = 'layered' | 'bounded' | 'spring';

/** What a drawing's cost depends on: its boxes (nodes and markers) and its arrows. */
export interface DrawingSize {
  boxes: number;
  arrows: number;
}

/** The largest drawing laid out by dot unbounded. */
const LAYERED_LIMITS: DrawingSize = { boxes: 100, arrows: 150 };
/** The largest drawing laid out by dot with bounded work. */
const BOUNDED_LIMITS: DrawingSize = { boxes: 1000, arrows: 1000 };
/** The largest drawing Graphviz is asked to lay out (sfdp ran out of memory at 10,000 boxes, 20,000 arrows). */
export const DRAWING_LIMITS: DrawingSize = { boxes: 5000, arrows: 20000 };

/** What to do when a graph cannot be drawn. */
export const OTHER_FORMATS = 'export it as DOT, JSON, CSV or Mermaid instead (--format dot|json|csv|mermaid)';

/** Graph attributes per layout, added to the DOT graph's own. */
const ATTRIBUTES: Record<LayoutKind, readonly string[]> = {
  layered: [],
  bounded: ['mclimit=0.05', 'nslimit=0.1', 'splines=line'],
  spring: ['layout=sfdp', 'overlap=scale', 'splines=line'],
};

/** The size of a drawing. */
export function sizeOf(diagram: Pick<Diagram, 'nodes' | 'edges'>): DrawingSize {
  return { boxes: diagram.nodes.length, arrows: diagram.edges.length };
}

/** The layout for a drawing of this size (`spring` past the drawing limits too, for DOT written out). */
export function layoutFor(size: DrawingSize): LayoutKind {
  if (within(size, LAYERED_LIMITS)) return 'layered';
  return within(size, BOUNDED_LIMITS) ? 'bounded' : 'spring';
}

/** The DOT graph attributes that select and bound a layout, as `name=value` items. */
export function layoutAttributes(kind: LayoutKind): readonly string[] {
  return ATTRIBUTES[kind];
}

/** True when Graphviz can draw a drawing of this size (SVG and HTML export refuse larger ones). */
export function isDrawable(size: DrawingSize): boolean {
  return within(size, DRAWING_LIMITS);
}

/** Throws the UserError that SVG and HTML export give for a drawing too large to lay out. */
export function assertDrawable(name: string, size: DrawingSize): void {
  if (isDrawable(size)) return;
  const count = (n: number) => n.toLocaleString('en-US');
  throw new UserError(
    `"${name}" is too large to draw as SVG or HTML: ${count(size.boxes)} boxes and ${count(size.arrows)} arrows, where Graphviz draws at most ${count(DRAWING_LIMITS.boxes)} boxes and ${count(DRAWING_LIMITS.arrows)} arrows`,
    1,
    OTHER_FORMATS,
  );
}

function within(size: DrawingSize, limits: DrawingSize): boolean {
  return size.boxes <= limits.boxes && size.arrows <= limits.arrows;
}
