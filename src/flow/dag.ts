/**
 * The pure part of evaluation (the split LangGraph.js makes in its `algo` module): given the flow's
 * shape and what has settled in this pass, which nodes run next and which can never run. No effects,
 * no model, no clock: the runner performs what this decides.
 */

/**
 * The nodes of a pass (file order, then temporary ones in the order added), what each depends on, and
 * the nodes each runs after without reading their answers (`after`, AgentKit's add_order).
 */
export interface FlowShape {
  order: readonly string[];
  dependencies: ReadonlyMap<string, readonly string[]>;
  after?: ReadonlyMap<string, readonly string[]>;
}

/** Everything `node` waits for: its dependencies, then the nodes it runs after. */
export function predecessorsOf(shape: FlowShape, node: string): string[] {
  return [...(shape.dependencies.get(node) ?? []), ...(shape.after?.get(node) ?? [])];
}

/**
 * How a node ended in this pass: answered (`done`), failed, reused its last pass's output (`reused`,
 * after a skip), or could not run because something it needs failed (`blocked`).
 */
export type Settlement = 'done' | 'failed' | 'reused' | 'blocked';

/** What happens next. */
export interface NextStep {
  /** Nodes whose dependencies all have outputs: they run now, in the shape's order. */
  ready: string[];
  /** Nodes that can never run in this pass, each with the failed node upstream of it. */
  blocked: { node: string; failed: string }[];
}

/** Whether a settled node's output can be used by the nodes after it. */
function hasOutput(settlement: Settlement | undefined): boolean {
  return settlement === 'done' || settlement === 'reused';
}

/**
 * The next step. A node whose dependency failed (or was itself blocked) is blocked, naming the failed
 * node at the root, so the report can say why it never ran. A node it only runs after need not have
 * answered: it waits until that node has settled, however.
 */
export function nextStep(
  shape: FlowShape,
  settled: ReadonlyMap<string, Settlement>,
  rootFailure: (node: string) => string,
): NextStep {
  const ready: string[] = [];
  const blocked: { node: string; failed: string }[] = [];
  for (const node of shape.order) {
    if (settled.has(node)) continue;
    const deps = shape.dependencies.get(node) ?? [];
    const broken = deps.find((dep) => {
      const state = settled.get(dep);
      return state === 'failed' || state === 'blocked';
    });
    const waits = shape.after?.get(node) ?? [];
    if (broken !== undefined) blocked.push({ node, failed: rootFailure(broken) });
    else if (deps.every((dep) => hasOutput(settled.get(dep))) && waits.every((w) => settled.has(w)))
      ready.push(node);
  }
  return { ready, blocked };
}

/**
 * A cycle in the shape, as the path that closes it in the direction answers flow (`['a', 'b', 'a']`:
 * b depends on a, and a on b), or undefined; `after` counts as a dependency. Dependencies on names the
 * shape lacks are ignored here (the lint reports them).
 */
export function findCycle(shape: FlowShape): string[] | undefined {
  const state = new Map<string, 'open' | 'closed'>();
  const path: string[] = [];
  const visit = (node: string): string[] | undefined => {
    state.set(node, 'open');
    path.push(node);
    for (const dep of predecessorsOf(shape, node)) {
      if (!shape.dependencies.has(dep)) continue;
      const seen = state.get(dep);
      if (seen === 'open') return [...path.slice(path.indexOf(dep)), dep].reverse();
      if (seen === undefined) {
        const cycle = visit(dep);
        if (cycle) return cycle;
      }
    }
    path.pop();
    state.set(node, 'closed');
    return undefined;
  };
  for (const node of shape.order) {
    if (state.has(node)) continue;
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return undefined;
}

/** `a → b → a`. */
export function describeCycle(cycle: readonly string[]): string {
  return cycle.join(' → ');
}

/** The longest chain of nodes waiting for one another, `after` included (independent nodes: depth 1). */
export function depthOf(shape: FlowShape): number {
  const depth = new Map<string, number>();
  const of = (node: string): number => {
    const known = depth.get(node);
    if (known !== undefined) return known;
    depth.set(node, 1);
    const deps = predecessorsOf(shape, node).filter((dep) => shape.dependencies.has(dep));
    const value = 1 + Math.max(0, ...deps.map(of));
    depth.set(node, value);
    return value;
  };
  return Math.max(0, ...shape.order.map(of));
}

/** Nodes no other node depends on: the answers a pass ends with. */
export function sinksOf(shape: FlowShape): string[] {
  const used = new Set([...shape.dependencies.values()].flat());
  return shape.order.filter((node) => !used.has(node));
}
