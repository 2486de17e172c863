/**
 * The graph linter as callers run it: the graph's own checks (src/graph/lint-graph.ts) with those of
 * the AIPL templates in their place, so loading, validating, designing and self-editing report a
 * problem the same way wherever it is found.
 */
import type { Finding, LintContext } from '../graph/lint.js';
import { graphFindings } from '../graph/lint-graph.js';
import { takesAipl } from '../graph/parse.js';
import type { GraphFile } from '../graph/schema.js';
import { AiplSyntaxError, parseTemplate } from './parse.js';

/** Checks a graph and returns its findings, graph-level ones first, then per node in file order. */
export function lintGraph(file: GraphFile): Finding[] {
  return graphFindings(file, aiplFindings);
}

/** What looks like AIPL: an update, a comment, a block, or `{ns.key}`. */
const AIPL_LOOK = /\((=|#|\()|\{\{?[A-Za-z0-9_]+\.[A-Za-z0-9_]+[:}]/;

/**
 * With `config.aipl`, templates that do not parse (the run would stop at them); without it, text that
 * looks like AIPL, which is sent to the model as written.
 */
function aiplFindings({ file, nodes }: LintContext): Finding[] {
  const texts: { node?: string; field: string; text: string }[] = [
    { field: 'config.prompt', text: file.config.prompt },
    ...nodes
      .filter((n) => takesAipl(n.action))
      .map((n) => ({ node: n.name, field: 'instruction', text: n.body })),
  ];
  if (!file.config.aipl) {
    const looks = texts.find(({ text }) => AIPL_LOOK.test(text));
    if (!looks) return [];
    return [
      {
        severity: 'warning',
        ...(looks.node !== undefined && { node: looks.node }),
        message: `${looks.field} looks like an AIPL template, but the graph's config.aipl is not set, so it is sent as written`,
        hint: 'add "aipl": {} to the config to render it as AIPL',
      },
    ];
  }
  return texts.flatMap(({ node, field, text }): Finding[] => {
    try {
      parseTemplate(text, field);
      return [];
    } catch (error) {
      if (!(error instanceof AiplSyntaxError)) throw error;
      return [
        {
          severity: 'error',
          ...(node !== undefined && { node }),
          message: `${field} is not a valid AIPL template: line ${error.at.line}, column ${error.at.column}: ${error.problem}`,
          hint: error.excerpt,
        },
      ];
    }
  });
}
