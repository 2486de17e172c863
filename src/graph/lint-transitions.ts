/**
 * Lint checks of transitions: targets that exist, a question with one choice per transition, and the
 * groups a transition names, `p.*` (tried in order by conditions, or chosen by score) and `name.n`
 * (visits), whose members must be there without gaps.
 */
import type { Finding, LintContext } from './lint.js';
import { closestName } from './names.js';
import { isChatAction, type CompiledNode } from './parse.js';
import { visitMembers, wildcardMembers } from './structure.js';

/** The most answers a multiple-choice transition question can offer: one letter each, A–Z. */
export const MAX_CHOICES = 26;

export function transitionFindings(node: CompiledNode, ctx: LintContext): Finding[] {
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
export function wildcardFindings(ctx: LintContext): Finding[] {
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
            hint: 'give it a condition; only the last member of the group may go without',
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

export function visitFindings(ctx: LintContext): Finding[] {
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
