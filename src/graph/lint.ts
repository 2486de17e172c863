/**
 * What the graph linter reports, and what its checks share. The checks need no model and no run: the
 * transitions (lint-transitions.ts), what nodes declare (lint-nodes.ts) and where a run can go
 * (lint-paths.ts), run in one order by graphFindings (lint-graph.ts). Callers lint through
 * src/aipl/lint.ts, which adds the AIPL templates' checks, so loading, validating, designing and
 * self-editing report a problem the same way wherever it is found.
 */
import type { CompiledNode } from './parse.js';
import type { GraphFile } from './schema.js';

/** One problem in a graph. `node` is absent for problems of the graph as a whole. */
export interface Finding {
  severity: 'error' | 'warning';
  node?: string;
  message: string;
  hint?: string;
}

/** What every check reads: the compiled nodes and a lookup by name. */
export interface LintContext {
  file: GraphFile;
  nodes: CompiledNode[];
  byName: Map<string, CompiledNode>;
  has: (name: string) => boolean;
}

/** One check of a graph: its findings, in the order it found them. */
export type GraphCheck = (ctx: LintContext) => Finding[];

/** True when any finding is an error. */
export function hasErrors(findings: readonly Finding[]): boolean {
  return findings.some((f) => f.severity === 'error');
}
