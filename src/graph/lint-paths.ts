/**
 * Lint checks of where a run can go: from the start node, every function and every interjection to
 * each node; `return` only where a function leads; and after a goodbye, to `quit`.
 */
import type { Finding, LintContext } from './lint.js';
import { closestName } from './names.js';
import { isChatAction } from './parse.js';
import { reachableFrom, startNodeOf, successors } from './structure.js';

/** Unreachable nodes, a start node that does not exist, and `return` where no function leads. */
export function reachabilityFindings(ctx: LintContext): Finding[] {
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
export function endingFindings(ctx: LintContext): Finding[] {
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
