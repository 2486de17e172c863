/**
 * A drawing, independent of any diagram language: which boxes exist, what each says, which arrows join
 * them and why. DOT and Mermaid render this one model, so both draw every box and arrow kind the same
 * way. `buildDiagram` draws a graph (its nodes plus markers for `return`, `quit`, `$var` and names that
 * lead nowhere); flow-diagram.ts draws a flow.
 */
import type { CompiledNode } from '../graph/parse.js';
import type { Action, GraphFile } from '../graph/schema.js';
import { startNodeOf, visitMembers, wildcardMembers } from '../graph/structure.js';
import { compileGraph } from '../graph/view.js';

/** What a box stands for: a graph node, or a marker for a transition that does not name a node. */
export type DiagramNodeKind = 'node' | 'return' | 'quit' | 'variable' | 'visit' | 'missing';

/**
 * How a piece of a box's label looks: the name (`title`), a small grey line (`tag`), plain text, an
 * italic question, or a condition in a warning colour. Each writer gives each look its own markup.
 */
export type LabelLook = 'title' | 'tag' | 'text' | 'question' | 'condition';

/** One piece of a box's label: raw text, wrapped by the writer to at most `lines` lines. */
export interface LabelPart {
  look: LabelLook;
  text: string;
  lines: number;
}

/** The fill of a node's box, so kinds of step stand apart at a glance. */
export type BoxFamily = 'chat' | 'thought' | 'code' | 'function' | 'goal' | 'prompt' | 'plain';

/** One box of the drawing. */
export interface DiagramNode {
  /** Unique within the diagram: a graph node's own name; markers get a name no graph node has. */
  key: string;
  /** Stable element id: `ag-node-<i>` for the i-th graph node in file order, `ag-mark-<j>` for markers. */
  id: string;
  kind: DiagramNodeKind;
  /** The graph node, for kind `node` in a graph's drawing. */
  node?: CompiledNode;
  /** What the box says: the node name, `return x`, `quit`, `$next`, `u.n`, or the name that is missing. */
  text: string;
  /** For kind `node`: the label, piece by piece (the text above is its key words only). */
  label?: LabelPart[];
  /** For kind `node`: its fill. */
  family?: BoxFamily;
  /** For kind `node`: entered on a condition rather than by an arrow (drawn dashed). */
  conditional?: boolean;
  /** The category cluster the box is drawn in. */
  category?: string;
  /** True for the node a conversation starts at. */
  start: boolean;
}

/**
 * Why an arrow exists: a transition, a function call, a transition through a variable, or (in a flow)
 * a dependency, which points from the node that answers first to the node that uses its answer, or an
 * order (`after`), from a node to one that waits for it without reading its answer (drawn dashed).
 */
export type DiagramEdgeKind = 'transition' | 'call' | 'variable' | 'dependency' | 'order';

/** One arrow, between box keys. `label` lines are raw text: the choice, a condition, `visit 2`, … */
export interface DiagramEdge {
  from: string;
  to: string;
  kind: DiagramEdgeKind;
  label: string[];
}

/** A graph or a flow as boxes and arrows, in a deterministic order (file order, then first use). */
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
        label: graphNodeLabel(node),
        family: FAMILY[node.action],
        start: node.name === start,
      };
      if (node.isInterjection) box.conditional = true;
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

/** Fill per action family. */
const FAMILY: Record<Action, BoxFamily> = {
  chat: 'chat',
  chat_exact: 'chat',
  chat_suffix: 'chat',
  thought: 'thought',
  thought_exact: 'thought',
  thought_qa: 'thought',
  code: 'code',
  function: 'function',
  local_function: 'function',
  global_function: 'function',
  set_prompt: 'prompt',
  append_prompt: 'prompt',
  set_user_prompt: 'prompt',
  append_user_prompt: 'prompt',
  transition: 'plain',
  // Both run something of their own (a goal loop, a flow's pass) before the graph goes on.
  goal_loop: 'goal',
  flow: 'goal',
};

/** A graph node's box: name, action, an excerpt of its instruction, its question, an interjection's condition. */
function graphNodeLabel(node: CompiledNode): LabelPart[] {
  const parts: LabelPart[] = [
    { look: 'title', text: node.name, lines: 2 },
    { look: 'tag', text: node.action, lines: 1 },
  ];
  if (node.instruction.trim()) parts.push({ look: 'text', text: node.instruction, lines: 4 });
  if (node.transitionQuestion?.trim())
    parts.push({ look: 'question', text: `? ${node.transitionQuestion}`, lines: 2 });
  if (node.isInterjection)
    parts.push({ look: 'condition', text: `when: ${node.conditionInterjection}`, lines: 2 });
  return parts;
}

function categoryOf(node: CompiledNode): string | undefined {
  return node.category?.trim() || undefined;
}
