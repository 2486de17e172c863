/**
 * Lint checks of what nodes declare: unique, valid names; functions defined once and called with their
 * arguments; settings that name real nodes and that the node's action reads; JavaScript that parses
 * (code in Python is checked when it runs).
 */
import { codeSyntaxProblems } from './code-syntax.js';
import { codeLanguage } from './language.js';
import type { Finding, LintContext } from './lint.js';
import { closestName, nodeNameProblem } from './names.js';
import { isCallAction, type CompiledNode } from './parse.js';

export function nameFindings({ nodes }: LintContext): Finding[] {
  const findings: Finding[] = [];
  const seen = new Set<string>();
  const reported = new Set<string>();
  if (nodes.length === 0) findings.push({ severity: 'error', message: 'the graph has no nodes' });
  for (const node of nodes) {
    const problem = nodeNameProblem(node.name);
    if (problem)
      findings.push({ severity: 'error', node: node.name, message: `invalid node name: ${problem}` });
    if (seen.has(node.name) && !reported.has(node.name)) {
      reported.add(node.name);
      findings.push({
        severity: 'error',
        node: node.name,
        message: `duplicate node name "${node.name}"`,
        hint: 'node names must be unique; rename one of them',
      });
    }
    seen.add(node.name);
  }
  return findings;
}

/** An argument with a `$var` is pasted in as text at run time, so it may become several arguments. */
function embedsVariable(argument: string): boolean {
  return /(?<!\\)\$[A-Za-z_]/.test(argument);
}

export function functionFindings(ctx: LintContext): Finding[] {
  const findings: Finding[] = [];
  const callables = new Map<string, CompiledNode>();
  for (const node of ctx.nodes) {
    if (!node.callable) continue;
    const earlier = callables.get(node.callable.fn);
    if (earlier)
      findings.push({
        severity: 'error',
        node: node.name,
        message: `function "${node.callable.fn}" is already defined by node "${earlier.name}"`,
      });
    else callables.set(node.callable.fn, node);
  }
  for (const node of ctx.nodes) {
    if (!node.call) continue;
    const { fn, args } = node.call;
    const callee = callables.get(fn);
    if (!callee) {
      const near = closestName(fn, callables.keys());
      const hint = ctx.has(fn)
        ? `node "${fn}" is not callable; name it "${fn}(…)" with its parameters`
        : near
          ? `did you mean "${near}"?`
          : undefined;
      findings.push({
        severity: 'error',
        node: node.name,
        message: `calls "${fn}", but no node is named "${fn}(…)"`,
        ...(hint ? { hint } : {}),
      });
    } else if (callee.callable!.params.length !== args.length && !args.some(embedsVariable)) {
      const takes = callee.callable!.params.length;
      findings.push({
        severity: 'error',
        node: node.name,
        message: `calls ${fn} with ${args.length} argument${args.length === 1 ? '' : 's'}, but "${callee.name}" takes ${takes}`,
      });
    }
  }
  return findings;
}

/** The node fields that list other nodes by name. */
const NODE_LISTS = [
  'prerequisiteNodes',
  'blockingNodes',
  'upWeightNodes',
  'downWeightNodes',
  'requiredRevisit',
] as const;

/** Settings that name nodes that do not exist, or that the node's action or kind never reads. */
export function settingFindings(node: CompiledNode, ctx: LintContext): Finding[] {
  const findings: Finding[] = [];
  const warn = (message: string, hint?: string): void => {
    findings.push({ severity: 'warning', node: node.name, message, ...(hint ? { hint } : {}) });
  };
  for (const field of NODE_LISTS)
    for (const name of node[field] ?? [])
      if (!ctx.has(name)) {
        const near = closestName(name, ctx.byName.keys());
        warn(`${field} names "${name}", which is not a node`, near ? `did you mean "${near}"?` : undefined);
      }
  if (node.requiredRevisit?.length && !isCallAction(node.action))
    warn(`requiredRevisit is read only by function nodes, not by a ${node.action} node`);
  if (node.transitionProbs && node.transitionProbs.length !== node.transitions.length)
    warn(`has ${node.transitionProbs.length} transitionProbs for ${node.transitions.length} transitions`);
  if (!node.isInterjection)
    for (const field of ['exampleInterjection', 'userInterjection', 'probabilityInterjection'] as const)
      if (node[field] !== undefined)
        warn(`${field} is read only by interjection nodes (with a conditionInterjection)`);
  if (node.conversationScope && !ctx.nodes.some((n) => n.category === node.conversationScope))
    warn(
      `conversationScope "${node.conversationScope}" is no node's category, so its prompts show no past turns`,
    );
  return findings;
}

/**
 * JavaScript that cannot run because it does not parse. Python is checked when it runs: parsing it here
 * would load the Python runtime for every graph that is linted.
 */
export function syntaxFindings(node: CompiledNode, ctx: LintContext): Finding[] {
  if (codeLanguage(ctx.file.config, node) !== 'javascript') return [];
  return codeSyntaxProblems(node).map(({ field, message }) => ({
    severity: 'error',
    node: node.name,
    message: `${field} is not valid JavaScript: ${message}`,
    hint:
      field === 'instruction'
        ? 'a code node runs its instruction as JavaScript statements'
        : 'a boolean condition is one JavaScript expression',
  }));
}
