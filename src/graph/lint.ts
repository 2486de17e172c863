/**
 * The graph linter: every check that does not need a model or a run. Loading, validating, designing and
 * self-editing all go through it, so a problem is reported the same way wherever it is found.
 */
import { AiplSyntaxError, parseTemplate } from '../aipl/parse.js';
import { codeSyntaxProblems } from './code-syntax.js';
import { closestName, nodeNameProblem } from './names.js';
import { isCallAction, isChatAction, takesAipl, type CompiledNode } from './parse.js';
import type { GraphFile } from './schema.js';
import { reachableFrom, startNodeOf, successors, visitMembers, wildcardMembers } from './structure.js';
import { compileGraph } from './view.js';

/** One problem in a graph. `node` is absent for problems of the graph as a whole. */
export interface Finding {
  severity: 'error' | 'warning';
  node?: string;
  message: string;
  hint?: string;
}

/** The most answers a multiple-choice transition question can offer: one letter each, A–Z. */
export const MAX_CHOICES = 26;

/** What every check reads: the compiled nodes and a lookup by name. */
interface LintContext {
  file: GraphFile;
  nodes: CompiledNode[];
  byName: Map<string, CompiledNode>;
  has: (name: string) => boolean;
}

/** Checks a graph and returns its findings, graph-level ones first, then per node in file order. */
export function lintGraph(file: GraphFile): Finding[] {
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
    ...nodes.flatMap(syntaxFindings),
    ...aiplFindings(ctx),
    ...reachabilityFindings(ctx),
    ...endingFindings(ctx),
  ];
  return sortByNode(findings, nodes);
}

/** True when any finding is an error. */
export function hasErrors(findings: readonly Finding[]): boolean {
  return findings.some((f) => f.severity === 'error');
}

function nameFindings({ nodes }: LintContext): Finding[] {
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

function transitionFindings(node: CompiledNode, ctx: LintContext): Finding[] {
  const findings: Finding[] = [];
  const error = (message: string, hint?: string): void => {
    findings.push({ severity: 'error', node: node.name, message, ...(hint ? { hint } : {}) });
  };
  const warning = (message: string, hint?: string): void => {
    findings.push({ severity: 'warning', node: node.name, message, ...(hint ? { hint } : {}) });
  };

  for (const target of node.targets) {
    if (target.kind === 'node' && !ctx.has(target.name)) {
      const near = closestName(target.name, ctx.byName.keys());
      error(`transition to missing node "${target.name}"`, near ? `did you mean "${near}"?` : undefined);
    } else if (target.kind === 'visit' && !ctx.has(`${target.base}.1`)) {
      error(`transition "${target.base}.n" needs a node named "${target.base}.1"`);
    }
  }

  const count = node.transitions.length;
  if (count > 1) {
    if (!node.transitionQuestion?.trim())
      error(
        `has ${count} transitions but no transitionQuestion`,
        'add a multiple-choice question whose answers pick the transition',
      );
    if (node.transitionChoices.length !== count)
      error(
        `has ${count} transitions but ${node.transitionChoices.length} transitionChoices`,
        'give exactly one choice per transition, in the same order',
      );
    if (count > MAX_CHOICES)
      error(`has ${count} transitions; a multiple-choice question offers at most ${MAX_CHOICES} (A-Z)`);
    const targets = new Set(node.transitions.map((t) => t.trim()));
    if (targets.size === 1)
      warning(
        `every choice of its question leads to "${[...targets][0]}", so the question decides nothing`,
        'keep one transition and drop the question, or lead the choices to different nodes',
      );
  } else if (node.transitionQuestion?.trim() || node.transitionChoices.length > 0) {
    warning('has a transition question or choices but at most one transition; they are never asked');
  }
  if (node.userInstructions.length > 0 && node.userInstructions.length !== count)
    warning(
      `has ${node.userInstructions.length} userInstructions for ${count} transitions`,
      'the user simulator needs one instruction per transition',
    );
  if (count === 0 && !isChatAction(node.action))
    warning(
      `a ${node.action} node with no transitions: the conversation would stop here without a reply`,
      'add a transition, or "quit" to end the run on purpose',
    );
  return findings;
}

/** Every `p.*` used anywhere: its group must exist, and be either tried in order or chosen by score. */
function wildcardFindings(ctx: LintContext): Finding[] {
  const findings: Finding[] = [];
  const users = groupUsers(ctx.nodes, (t) => (t.kind === 'wildcard' ? t.prefix : undefined));
  const members = new Set<string>();
  for (const [prefix, userNames] of users) {
    const group = wildcardMembers(prefix, ctx.has);
    group.forEach((m) => members.add(m));
    if (group.length === 0) {
      for (const user of userNames)
        findings.push({
          severity: 'error',
          node: user,
          message: `transition "${prefix}.*" needs nodes "${prefix}.a", "${prefix}.b", …; there is no "${prefix}.a"`,
        });
      continue;
    }
    findings.push(...groupFindings(ctx, prefix, group));
    findings.push(...strayMembers(ctx, prefix, /^[a-z]$/, group, `"${prefix}.*"`));
  }
  for (const node of ctx.nodes)
    if (node.booleanCondition?.trim() && !members.has(node.name))
      findings.push({
        severity: 'warning',
        node: node.name,
        message: 'has a booleanCondition but no wildcard transition tries it',
        hint: 'conditions are evaluated only for nodes p.a, p.b, … reached by a transition "p.*"',
      });
  return findings;
}

/**
 * A group is tried by conditions when its first member has one (then every member but the last needs
 * one, and the last is the else); otherwise it is chosen by score from its members' weight lists, as
 * AutoGRAMS does, and conditions are never evaluated.
 */
function groupFindings(ctx: LintContext, prefix: string, group: readonly string[]): Finding[] {
  const members = group.map((name) => ctx.byName.get(name)!);
  const conditioned = members.filter((m) => m.booleanCondition?.trim());
  if (!members[0]!.booleanCondition?.trim()) {
    const weighted = members.some((m) =>
      [m.prerequisiteNodes, m.blockingNodes, m.upWeightNodes, m.downWeightNodes].some((list) => list?.length),
    );
    return [
      ...conditioned.map((m): Finding => ({
        severity: 'warning',
        node: m.name,
        message: `its booleanCondition is never evaluated: "${group[0]}" has none, so "${prefix}.*" is chosen by score`,
        hint: `give "${group[0]}" a condition to try the group's members in order`,
      })),
      ...(weighted || group.length < 2
        ? []
        : [
            {
              severity: 'warning' as const,
              node: group[0]!,
              message: `"${prefix}.*" always leads here: its members have no boolean conditions and no weight lists`,
              hint: 'give the members boolean conditions, or prerequisite, blocking, up- or down-weight nodes',
            },
          ]),
    ];
  }
  const findings: Finding[] = members.slice(0, -1).flatMap((m, i) =>
    m.booleanCondition?.trim()
      ? []
      : [
          {
            severity: 'error' as const,
            node: m.name,
            message: `is tried by "${prefix}.*" before "${group[i + 1]}" but has no booleanCondition`,
            hint: 'give it a JavaScript condition; only the last member of the group may go without',
          },
        ],
  );
  const last = members[members.length - 1]!;
  if (last.booleanCondition?.trim())
    findings.push({
      severity: 'warning',
      node: last.name,
      message: `is the last member of "${prefix}.*", so it is the else branch and its booleanCondition is never evaluated`,
      hint: 'drop the condition, or add an unconditional member after it as the else branch',
    });
  return findings;
}

function visitFindings(ctx: LintContext): Finding[] {
  const users = groupUsers(ctx.nodes, (t) => (t.kind === 'visit' ? t.base : undefined));
  return [...users.keys()].flatMap((base) =>
    strayMembers(ctx, base, /^[1-9]\d*$/, visitMembers(base, ctx.has), `"${base}.n"`),
  );
}

/** Nodes named like members of a group that the group never reaches because of a gap before them. */
function strayMembers(
  ctx: LintContext,
  prefix: string,
  suffix: RegExp,
  group: readonly string[],
  transition: string,
): Finding[] {
  return ctx.nodes
    .filter((n) => n.name.startsWith(`${prefix}.`) && suffix.test(n.name.slice(prefix.length + 1)))
    .filter((n) => !group.includes(n.name))
    .map((n) => ({
      severity: 'warning' as const,
      node: n.name,
      message: `is never reached by ${transition}: the group stops at ${group.length > 0 ? `"${group[group.length - 1]}"` : 'its first missing member'}`,
      hint: 'group members must be numbered or lettered without gaps',
    }));
}

function groupUsers(
  nodes: readonly CompiledNode[],
  key: (target: CompiledNode['targets'][number]) => string | undefined,
): Map<string, string[]> {
  const users = new Map<string, string[]>();
  for (const node of nodes)
    for (const target of node.targets) {
      const k = key(target);
      if (k === undefined) continue;
      const list = users.get(k) ?? [];
      if (!list.includes(node.name)) list.push(node.name);
      users.set(k, list);
    }
  return users;
}

/** An argument with a `$var` is pasted in as text at run time, so it may become several arguments. */
function embedsVariable(argument: string): boolean {
  return /(?<!\\)\$[A-Za-z_]/.test(argument);
}

function functionFindings(ctx: LintContext): Finding[] {
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
function settingFindings(node: CompiledNode, ctx: LintContext): Finding[] {
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

/** JavaScript that cannot run because it does not parse. */
function syntaxFindings(node: CompiledNode): Finding[] {
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

/** Unreachable nodes, a start node that does not exist, and `return` where no function leads. */
function reachabilityFindings(ctx: LintContext): Finding[] {
  const findings: Finding[] = [];
  const start = startNodeOf(ctx.file);
  if (start !== undefined && !ctx.has(start)) {
    const near = closestName(start, ctx.byName.keys());
    findings.push({
      severity: 'error',
      message: `the start node "${start}" (config.startNode) does not exist`,
      ...(near ? { hint: `did you mean "${near}"?` } : {}),
    });
  }
  const callables = ctx.nodes.filter((n) => n.callable).map((n) => n.name);
  const interjections = ctx.nodes.filter((n) => n.isInterjection).map((n) => n.name);
  const inFunctionBody = reachableFrom(callables, ctx.nodes);
  // An interjection after a chat node inside a function runs in that function's frame.
  const inFunction = ctx.nodes.some((n) => inFunctionBody.has(n.name) && isChatAction(n.action))
    ? reachableFrom([...callables, ...interjections], ctx.nodes)
    : inFunctionBody;
  // A function may jump anywhere through a `$var` transition, so a `return` it could reach that way is fine.
  const functionJumps = ctx.nodes.some(
    (n) => inFunction.has(n.name) && n.targets.some((t) => t.kind === 'variable'),
  );
  for (const node of ctx.nodes)
    if (node.targets.some((t) => t.kind === 'return') && !inFunction.has(node.name))
      findings.push(
        functionJumps
          ? {
              severity: 'warning',
              node: node.name,
              message: 'returns, but only a $variable transition inside a function can lead here',
              hint: 'make sure that variable names this node only while a function runs',
            }
          : {
              severity: 'error',
              node: node.name,
              message: 'return outside a function: no callable node (named like "f(x)") leads here',
            },
      );

  if (start === undefined || !ctx.has(start)) return findings;
  const reachable = reachableFrom([start, ...callables, ...interjections], ctx.nodes);
  const variableJumps = ctx.nodes.some(
    (n) => reachable.has(n.name) && n.targets.some((t) => t.kind === 'variable'),
  );
  for (const node of ctx.nodes)
    if (!reachable.has(node.name))
      findings.push({
        severity: 'warning',
        node: node.name,
        message: `is unreachable from the start node "${start}", every function and every interjection`,
        ...(variableJumps ? { hint: 'a $variable transition may still lead here at run time' } : {}),
      });
  return findings;
}

/** True when a text says goodbye or closes the conversation, in the words chatbot graphs use for it. */
export function saysGoodbye(text: string): boolean {
  return /\b(?:good-?bye|bye|farewell)\b|\bend (?:the|this) (?:conversation|chat)\b/i.test(text);
}

/**
 * Chat nodes that say goodbye, after which the conversation goes on: no path from them leads to `quit`.
 * A graph without `quit` is no mistake in itself: AutoGRAMS chats are open-ended (the user leaves, the
 * graph does not end), its own examples included. A goodbye that is not the end is. Left alone: a chat
 * node without transitions (the conversation stops there) and one whose simulated user leaves (its
 * first user instruction is the end signal, AutoGRAMS' mark of where a conversation ends).
 */
function endingFindings(ctx: LintContext): Finding[] {
  const { endSignal } = ctx.file.config;
  const goodbyes = ctx.nodes.filter(
    (n) =>
      isChatAction(n.action) &&
      n.transitions.length > 0 &&
      n.userInstructions[0]?.trim() !== endSignal &&
      saysGoodbye(n.body),
  );
  if (goodbyes.length === 0) return [];
  const canEnd = nodesThatCanEnd(ctx);
  // An interjection is asked after every chat node, so one that can end lets every chat node end.
  if (ctx.nodes.some((n) => n.isInterjection && canEnd.has(n.name))) return [];
  return goodbyes
    .filter((n) => !canEnd.has(n.name))
    .map((n): Finding => ({
      severity: 'warning',
      node: n.name,
      message: 'says goodbye, but the conversation cannot end after it: no path from it leads to quit',
      hint: 'give it the transition "quit", so the conversation ends after the goodbye',
    }));
}

/**
 * Nodes from which a path leads to `quit`. Where a run goes after a `$variable`, a `return` or a function
 * call is not followed here, so those count as ways that may end: the check warns only when it is sure.
 */
function nodesThatCanEnd(ctx: LintContext): Set<string> {
  const before = new Map<string, string[]>();
  for (const node of ctx.nodes)
    for (const next of successors(node, ctx.has)) {
      const list = before.get(next);
      if (list) list.push(node.name);
      else before.set(next, [node.name]);
    }
  const ends = ctx.nodes.filter(
    (n) => n.call || n.targets.some((t) => t.kind === 'quit' || t.kind === 'return' || t.kind === 'variable'),
  );
  const canEnd = new Set(ends.map((n) => n.name));
  const queue = [...canEnd];
  while (queue.length > 0)
    for (const name of before.get(queue.pop()!) ?? [])
      if (!canEnd.has(name)) {
        canEnd.add(name);
        queue.push(name);
      }
  return canEnd;
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
