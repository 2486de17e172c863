/**
 * The drawing of a graph, independent of any diagram language: which boxes exist (graph nodes plus
 * markers for `return`, `quit`, `$var` and names that lead nowhere), which arrows join them and why.
 * DOT and Mermaid render this one model, so both draw every transition kind the same way.
 */
import type { CompiledNode } from '../graph/parse.js';
import type { GraphFile } from '../graph/schema.js';
import { startNodeOf, visitMembers, wildcardMembers } from '../graph/structure.js';
import { compileGraph } from '../graph/view.js';

/** What a box stands for: a graph node, or a marker for a transition that does not name a node. */
export type DiagramNodeKind = 'node' | 'return' | 'quit' | 'variable' | 'visit' | 'missing';

/** One box of the drawing. */
export interface DiagramNode {
  /** Unique within the diagram: a graph node's own name; markers get a name no graph node has. */
  key: string;
  /** Stable element id: `ag-node-<i>` for the i-th graph node in file order, `ag-mark-<j>` for markers. */
  id: string;
  kind: DiagramNodeKind;
  /** The graph node, for kind `node`. */
  node?: CompiledNode;
  /** What the box says: the node name, `return x`, `quit`, `$next`, `u.n`, or the name that is missing. */
  text: string;
  /** The category cluster the box is drawn in. */
  category?: string;
  /** True for the node a conversation starts at. */
  start: boolean;
}

/** Why an arrow exists: a transition, a function call, or a transition through a variable. */
export type DiagramEdgeKind = 'transition' | 'call' | 'variable';

/** One arrow, between box keys. `label` lines are raw text: the choice, a condition, `visit 2`, … */
export interface DiagramEdge {
  from: string;
  to: string;
  kind: DiagramEdgeKind;
  label: string[];
}

/** A graph laid out as boxes and arrows, in a deterministic order (file order, then first use). */
export interface Diagram {
  name: string;
  nodes: DiagramNode[];
  edges: DiagramEdge[];
  /** Node categories in order of first appearance; each is drawn as a cluster. */
  categories: string[];
}

/** Builds the drawing of a graph file. */
export function buildDiagram(file: GraphFile): Diagram {
  const compiled = compileGraph(file).nodes;
  const builder = new DiagramBuilder(compiled, startNodeOf(file));
  for (const node of compiled) builder.addEdgesOf(node);
  const categories = [...new Set(builder.nodes.flatMap((n) => (n.category ? [n.category] : [])))];
  return { name: file.name, nodes: builder.nodes, edges: builder.edges, categories };
}

class DiagramBuilder {
  readonly nodes: DiagramNode[] = [];
  readonly edges: DiagramEdge[] = [];
  readonly #byName = new Map<string, CompiledNode>();
  readonly #has = (name: string): boolean => this.#byName.has(name);
  readonly #taken = new Set<string>();
  /** Marker identity (`quit`, `var:x`, `visit:u`, `return:<node>:<text>`, `missing:<name>`) -> box key. */
  readonly #markers = new Map<string, string>();
  #markerCount = 0;

  constructor(
    readonly graph: readonly CompiledNode[],
    start: string | undefined,
  ) {
    graph.forEach((node, i) => {
      this.#byName.set(node.name, node);
      this.#taken.add(node.name);
      const box: DiagramNode = {
        key: node.name,
        id: `ag-node-${i}`,
        kind: 'node',
        node,
        text: node.name,
        start: node.name === start,
      };
      const category = categoryOf(node);
      if (category) box.category = category;
      this.nodes.push(box);
    });
  }

  addEdgesOf(node: CompiledNode): void {
    if (node.call) {
      const fn = node.call.fn;
      const callee = this.graph.find((n) => n.callable?.fn === fn);
      const to = callee ? callee.name : this.#marker(`missing:${fn}()`, 'missing', `${fn}(…)`);
      this.#edge(node.name, to, 'call', ['calls']);
    }
    const asked = Boolean(node.transitionQuestion?.trim());
    node.targets.forEach((target, i) => {
      const choice = asked ? node.transitionChoices[i]?.trim() : undefined;
      const label = choice ? [choice] : [];
      switch (target.kind) {
        case 'node':
          this.#edge(node.name, this.#named(target.name), 'transition', label);
          break;
        case 'wildcard':
          this.#addWildcard(node, target.prefix, label);
          break;
        case 'visit':
          this.#addVisits(node, target.base, label);
          break;
        case 'return': {
          const text = target.expression ? `return ${target.expression}` : 'return';
          const key = this.#marker(`return:${node.name}:${text}`, 'return', text, categoryOf(node));
          this.#edge(node.name, key, 'transition', label);
          break;
        }
        case 'quit':
          this.#edge(node.name, this.#marker('quit', 'quit', 'quit'), 'transition', label);
          break;
        case 'variable': {
          const key = this.#marker(`var:${target.variable}`, 'variable', `$${target.variable}`);
          this.#edge(node.name, key, 'variable', label);
          break;
        }
      }
    });
  }

  /** `p.*` leads to `p.a`, `p.b`, … tried in order by their boolean conditions; the last one is the else. */
  #addWildcard(node: CompiledNode, prefix: string, label: string[]): void {
    const members = wildcardMembers(prefix, this.#has);
    if (members.length === 0) {
      this.#edge(
        node.name,
        this.#marker(`missing:${prefix}.*`, 'missing', `${prefix}.*`),
        'transition',
        label,
      );
      return;
    }
    members.forEach((member, j) => {
      const isElse = j === members.length - 1 && members.length > 1;
      const condition = isElse ? 'else' : this.#byName.get(member)?.booleanCondition?.trim();
      this.#edge(node.name, member, 'transition', condition ? [...label, condition] : label);
    });
  }

  /**
   * `u.n` leads to `u.1` on the first visit, `u.2` on the second, …. Several nodes often share one such
   * transition, so it is drawn as one `u.n` hub with an arrow per numbered node, not an arrow per pair.
   */
  #addVisits(node: CompiledNode, base: string, label: string[]): void {
    const members = visitMembers(base, this.#has);
    if (members.length === 0) {
      this.#edge(node.name, this.#marker(`missing:${base}.n`, 'missing', `${base}.n`), 'transition', label);
      return;
    }
    const identity = `visit:${base}`;
    const isNew = !this.#markers.has(identity);
    const hub = this.#marker(identity, 'visit', `${base}.n`);
    this.#edge(node.name, hub, 'transition', label);
    if (isNew) members.forEach((member, j) => this.#edge(hub, member, 'transition', [`visit ${j + 1}`]));
  }

  #named(name: string): string {
    return this.#byName.has(name) ? name : this.#marker(`missing:${name}`, 'missing', name);
  }

  #marker(identity: string, kind: DiagramNodeKind, text: string, category?: string): string {
    const existing = this.#markers.get(identity);
    if (existing) return existing;
    // A marker's key must differ from every node name, or DOT would merge the two boxes.
    let key = text;
    while (this.#taken.has(key)) key += "'";
    this.#taken.add(key);
    this.#markers.set(identity, key);
    const box: DiagramNode = { key, id: `ag-mark-${this.#markerCount++}`, kind, text, start: false };
    if (category) box.category = category;
    this.nodes.push(box);
    return key;
  }

  #edge(from: string, to: string, kind: DiagramEdgeKind, label: string[]): void {
    this.edges.push({ from, to, kind, label });
  }
}

function categoryOf(node: CompiledNode): string | undefined {
  return node.category?.trim() || undefined;
}
