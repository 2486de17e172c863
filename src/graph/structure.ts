/**
 * Structural questions about a graph that both the linter and the interpreter ask, answered once with
 * AutoGRAMS semantics: where a run starts, which nodes a `p.*` or `u.n` transition can reach, and which
 * nodes can be reached at all.
 */
import type { CompiledNode } from './parse.js';

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/** The node a run starts at: `config.startNode`, else `start1` when present, else the first node. */
export function startNodeOf(graph: {
  config: { startNode?: string | undefined };
  nodes: readonly { name: string }[];
}): string | undefined {
  if (graph.config.startNode) return graph.config.startNode;
  if (graph.nodes.some((n) => n.name === 'start1')) return 'start1';
  return graph.nodes[0]?.name;
}

/**
 * The members of a wildcard group `prefix.*`, in the order their conditions are tried: `prefix.a`,
 * `prefix.b`, … up to the first missing letter (AutoGRAMS stops there, so later letters are never tried).
 */
export function wildcardMembers(prefix: string, has: (name: string) => boolean): string[] {
  const members: string[] = [];
  for (const letter of LETTERS) {
    const name = `${prefix}.${letter}`;
    if (!has(name)) break;
    members.push(name);
  }
  return members;
}

/**
 * The nodes a visit transition `base.n` leads to: `base.1` on the first visit, `base.2` on the second, …
 * up to the first missing number; the last one repeats once the others are used up.
 */
export function visitMembers(base: string, has: (name: string) => boolean): string[] {
  const members: string[] = [];
  for (let n = 1; has(`${base}.${n}`); n++) members.push(`${base}.${n}`);
  return members;
}

/** Every node a node can lead to by its transitions (variable targets are unknowable and left out). */
export function successors(node: CompiledNode, has: (name: string) => boolean): string[] {
  const next: string[] = [];
  for (const target of node.targets) {
    if (target.kind === 'node' && has(target.name)) next.push(target.name);
    else if (target.kind === 'wildcard') next.push(...wildcardMembers(target.prefix, has));
    else if (target.kind === 'visit') next.push(...visitMembers(target.base, has));
  }
  return next;
}

/** Names of the nodes reachable from `roots` (roots included) by following transitions. */
export function reachableFrom(roots: readonly string[], nodes: readonly CompiledNode[]): Set<string> {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const has = (name: string): boolean => byName.has(name);
  const seen = new Set<string>();
  const queue = roots.filter(has);
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (seen.has(name)) continue;
    seen.add(name);
    for (const next of successors(byName.get(name)!, has)) if (!seen.has(next)) queue.push(next);
  }
  return seen;
}
