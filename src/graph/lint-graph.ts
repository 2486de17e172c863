/**
 * The graph's own lint checks, run in one order; a layer above adds the checks of what the graph's
 * templates are written in (src/aipl/lint.ts) in their place among them. Findings come graph-level
 * ones first, then per node in file order.
 */
import type { Finding, GraphCheck, LintContext } from './lint.js';
import { functionFindings, nameFindings, settingFindings, syntaxFindings } from './lint-nodes.js';
import { endingFindings, reachabilityFindings } from './lint-paths.js';
import { transitionFindings, visitFindings, wildcardFindings } from './lint-transitions.js';
import type { CompiledNode } from './parse.js';
import type { GraphFile } from './schema.js';
import { compileGraph } from './view.js';

/**
 * Checks a graph and returns its findings. `templates` checks its prompt and instructions as templates
 * (src/aipl/lint.ts); without it they are not checked.
 */
export function graphFindings(file: GraphFile, templates?: GraphCheck): Finding[] {
  const { nodes, problems } = compileGraph(file);
  const byName = new Map<string, CompiledNode>();
  for (const node of nodes) if (!byName.has(node.name)) byName.set(node.name, node);
  const ctx: LintContext = { file, nodes, byName, has: (name) => byName.has(name) };

  const findings: Finding[] = [
    ...problems.map((p): Finding => ({ severity: 'error', node: p.node, message: p.message })),
    ...nameFindings(ctx),
    ...nodes.flatMap((node) => transitionFindings(node, ctx)),
    ...wildcardFindings(ctx),
    ...visitFindings(ctx),
    ...functionFindings(ctx),
    ...nodes.flatMap((node) => settingFindings(node, ctx)),
    ...nodes.flatMap((node) => syntaxFindings(node, ctx)),
    ...(templates ? templates(ctx) : []),
    ...reachabilityFindings(ctx),
    ...endingFindings(ctx),
  ];
  return sortByNode(findings, nodes);
}

function sortByNode(findings: Finding[], nodes: readonly CompiledNode[]): Finding[] {
  const order = new Map<string, number>();
  nodes.forEach((n, i) => {
    if (!order.has(n.name)) order.set(n.name, i);
  });
  const rank = (f: Finding): number => (f.node === undefined ? -1 : (order.get(f.node) ?? nodes.length));
  // Array sort is stable: findings of one node keep the order the checks found them in.
  return findings.sort((a, b) => rank(a) - rank(b));
}
