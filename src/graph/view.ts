import { compileNode, type CompiledNode, type ParseProblem } from './parse.js';
import type { GraphConfig, GraphFile } from './schema.js';

/**
 * What the interpreter needs of a graph: compiled nodes by name, the config and a version number.
 * A static graph never changes; a versioned graph (self-referential mode) changes between steps.
 */
export interface GraphView {
  readonly name: string;
  readonly config: GraphConfig;
  /** Increases by one with every applied edit; 0 for a graph as loaded. */
  readonly version: number;
  get(name: string): CompiledNode | undefined;
  /** Nodes in file order. */
  nodes(): readonly CompiledNode[];
}

/** Compiles every node of a graph file. Parse problems are collected for the linter, not thrown. */
export function compileGraph(file: GraphFile): { nodes: CompiledNode[]; problems: ParseProblem[] } {
  const nodes: CompiledNode[] = [];
  const problems: ParseProblem[] = [];
  for (const spec of file.nodes) {
    const compiled = compileNode(spec);
    nodes.push(compiled.node);
    problems.push(...compiled.problems);
  }
  return { nodes, problems };
}

/** A graph that does not change while it runs. */
export class StaticGraph implements GraphView {
  readonly version = 0;
  readonly #byName: Map<string, CompiledNode>;
  readonly #nodes: CompiledNode[];

  constructor(readonly file: GraphFile) {
    this.#nodes = compileGraph(file).nodes;
    this.#byName = new Map(this.#nodes.map((n) => [n.name, n]));
  }

  get name(): string {
    return this.file.name;
  }

  get config(): GraphConfig {
    return this.file.config;
  }

  get(name: string): CompiledNode | undefined {
    return this.#byName.get(name);
  }

  nodes(): readonly CompiledNode[] {
    return this.#nodes;
  }
}
