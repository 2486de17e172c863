/**
 * The language a graph's code is written in: JavaScript for native graphs unless they say otherwise,
 * Python for AutoGRAMS spreadsheets. A node may override its graph's language for its own code, its
 * boolean condition and the arguments of the calls it makes.
 */
import type { CompiledNode } from './parse.js';
import type { GraphView } from './view.js';

export type CodeLanguage = 'javascript' | 'python';

/** The language of `node`'s code, condition and call arguments: its own, else the graph's, else JavaScript. */
export function codeLanguage(
  config: { language?: CodeLanguage | undefined },
  node?: { language?: CodeLanguage | undefined },
): CodeLanguage {
  return node?.language ?? config.language ?? 'javascript';
}

/** Whether any node of the graph has code, a condition or a call argument in Python: only then is the Python runtime loaded. */
export function usesPython(graph: Pick<GraphView, 'config' | 'nodes'>): boolean {
  return graph.nodes().some((node) => codeLanguage(graph.config, node) === 'python' && hasCode(node));
}

/** Whether the node holds text that runs as code: a code instruction, a condition, call arguments, a returned expression. */
export function hasCode(node: CompiledNode): boolean {
  return (
    node.action === 'code' ||
    Boolean(node.booleanCondition?.trim()) ||
    (node.call?.args.length ?? 0) > 0 ||
    node.targets.some((target) => target.kind === 'return' && target.expression !== undefined)
  );
}
