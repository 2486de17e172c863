/**
 * Transition choice as pure functions of (graph, state): which question the classifier must answer, if
 * any, and where a chosen transition string leads (AutoGRAMS' `apply_transition` and `predict_next_state`
 * in autograms/nodes/base_node.py, `process_node_id` in autograms/autogram_utils.py). The interpreter
 * asks the questions and evaluates the wildcard conditions (both are effects); everything that decides
 * is here, where tests call it directly.
 */
import { UserError } from '../errors.js';
import { codeLanguage } from '../graph/language.js';
import { closestName } from '../graph/names.js';
import { isChatAction, parseTransition, type CompiledNode, type TransitionTarget } from '../graph/parse.js';
import { visitMembers, wildcardMembers } from '../graph/structure.js';
import type { GraphView } from '../graph/view.js';
import { variablesInScope } from './frames.js';
import { classifierHistory } from './prompt.js';
import type { ConversationState } from './state.js';
import { renderTemplate, valueTextFor } from './template.js';

/** A multiple-choice question for the classifier, with the conversation it is about. */
export interface ChoiceQuestion {
  question: string;
  /** Answer texts; a yes/no pair is always yes first. */
  choices: string[];
  /** `yesno` when the two choices are yes and no (answered Yes/No); otherwise lettered A, B, C… */
  kind: 'letters' | 'yesno';
  /** What the classifier reads before the conversation: the question prompt (and interjection examples). */
  opening: string;
  /** The conversation, one block of text (Appendix B). */
  history: string;
  /** How much less likely each choice is (logit-bias points), when some are. */
  penalties?: number[];
}

/**
 * How a node's transitions are taken: straight to its only transition, or by asking the classifier, whose
 * answer i picks the transition `order[i]`.
 */
export type TransitionPlan =
  | { kind: 'fixed'; index: 0 }
  | {
      kind: 'ask';
      question: ChoiceQuestion;
      /** `order[i]` is the index in the node's transitions of choice i (the choices may be reordered). */
      order: number[];
    };

/** Where a transition string leads, once `$var`s are embedded and `name.n` is counted. */
export type Resolution =
  | { kind: 'node'; name: string }
  /** A `p.*` wildcard: try each member's condition in order; the last member is the else. */
  | { kind: 'branches'; members: { name: string; condition?: string }[] }
  /** A `p.*` wildcard whose first member has no condition: the member chosen by score. */
  | { kind: 'scored'; name: string }
  | { kind: 'return'; expression?: string }
  | { kind: 'quit' };

/** True for the nodes that reply to the user and wait (after which interjections are checked). */
export function isChatNode(node: CompiledNode): boolean {
  return isChatAction(node.action);
}

/**
 * Choices are a yes/no pair, asked as Yes or No rather than by letter, when they are "yes" and "no"
 * exactly, ignoring case only, as AutoGRAMS compares them (autograms/nodes/base_node.py:403): "Yes." and
 * "No." are lettered choices.
 */
export function isYesNo(choices: readonly string[]): boolean {
  if (choices.length !== 2) return false;
  const lowered = choices.map((choice) => choice.toLowerCase()).sort();
  return lowered[0] === 'no' && lowered[1] === 'yes';
}

/** How `node`'s transitions are to be taken in `state`. A node without transitions is an error in the graph. */
export function planTransition(
  graph: GraphView,
  node: CompiledNode,
  state: ConversationState,
): TransitionPlan {
  const targets = node.transitions;
  if (targets.length === 0)
    throw new UserError(
      `node "${node.name}" has no transitions, so the run cannot go on from it`,
      1,
      'add a transition (a node name, `return` or `quit`)',
    );
  if (targets.length === 1) return { kind: 'fixed', index: 0 };

  const variables = variablesInScope(state);
  const valueText = valueTextFor(graph.config);
  const render = (text: string, field: string): string =>
    renderTemplate(text, variables, { node: node.name, field }, valueText);
  const question = render(
    node.transitionQuestion?.trim() || 'Which of the following should happen next?',
    'transition question',
  );
  // A missing choice falls back to the transition it stands for, so the question stays answerable.
  let choices = targets.map((target, i) =>
    render(node.transitionChoices[i]?.trim() || target, 'transition choice'),
  );
  let order = targets.map((_, i) => i);
  const yesNo = isYesNo(choices);
  // The classifier answers Yes for the first choice of a yes/no pair, so "no, yes" is asked as "yes, no".
  if (yesNo && choices[0]!.toLowerCase() === 'no') {
    choices = [choices[1]!, choices[0]!];
    order = [1, 0];
  }
  return {
    kind: 'ask',
    order,
    question: {
      question,
      choices,
      kind: yesNo ? 'yesno' : 'letters',
      opening: node.questionPrompt ?? graph.config.questionPrompt,
      history: classifierHistory(graph, state, node.transitionContext ?? graph.config.transitionContext),
    },
  };
}

/**
 * The interjection question asked after a chat node (Appendix C; `predict_interjection_state` in
 * autograms/autogram_utils.py), or undefined when the graph has no interjection nodes. `targets[i]` is
 * the node for choice i; the last choice is the default (no jump), which the config's down-weight makes
 * likelier. As in AutoGRAMS, it is asked inside function calls too: the interjection node then runs in
 * the function's frame, and a `return` from it returns to the function's caller.
 */
export function planInterjection(
  graph: GraphView,
  state: ConversationState,
): { question: ChoiceQuestion; targets: string[] } | undefined {
  const nodes = graph.nodes().filter((n) => n.isInterjection);
  if (nodes.length === 0) return undefined;
  const config = graph.config;
  const choices = [...nodes.map((n) => n.conditionInterjection!.trim()), config.interjectionDefault];
  const examples = nodes.flatMap((n) =>
    n.exampleInterjection?.trim() ? [n.exampleInterjection.trim()] : [],
  );
  return {
    targets: nodes.map((n) => n.name),
    question: {
      question: config.interjectionQuestion,
      choices,
      kind: 'letters',
      opening: [...examples, config.questionPrompt].join('\n\n'),
      // The interjection check looks at the last exchange only: the agent's reply and the user's answer.
      history: classifierHistory(graph, state, 1),
      ...(config.interjectionDownWeight > 0 && {
        penalties: choices.map((_, i) => (i < nodes.length ? config.interjectionDownWeight : 0)),
      }),
    },
  };
}

/** A condition of a wildcard member, and the member it belongs to. */
export interface MemberCondition {
  node: string;
  expression: string;
}

/** What conditionsAhead found for a node, at a version of the graph. */
const ahead = new WeakMap<CompiledNode, { version: number; conditions: readonly MemberCondition[] }>();

/**
 * The boolean conditions the run evaluates on leaving `node`, in order while none holds, when they are
 * known before it runs: those of the members of its only transition, a wildcard written without
 * `$var`s, up to the first member without one or in another language than the node's code (the
 * conditions go to the node's sandbox; the last member, the else, is never evaluated). Empty
 * otherwise, and for a chat node (an interjection may come first). Remembered for each version of the
 * graph: a loop asks for the same node's at every pass.
 */
export function conditionsAhead(graph: GraphView, node: CompiledNode): readonly MemberCondition[] {
  const known = ahead.get(node);
  if (known?.version === graph.version) return known.conditions;
  const conditions: MemberCondition[] = [];
  const target = node.targets[0];
  if (
    node.transitions.length === 1 &&
    !node.transitions[0]!.includes('$') &&
    !isChatNode(node) &&
    target?.kind === 'wildcard'
  ) {
    const members = wildcardMembers(target.prefix, (name) => graph.get(name) !== undefined);
    const language = codeLanguage(graph.config, node);
    for (const name of members.slice(0, -1)) {
      const member = graph.get(name)!;
      const expression = member.booleanCondition?.trim();
      if (!expression || codeLanguage(graph.config, member) !== language) break;
      conditions.push({ node: name, expression });
    }
  }
  ahead.set(node, { version: graph.version, conditions });
  return conditions;
}

/**
 * Where the transition `index` of node `from` leads: its target as parsed when the graph was loaded,
 * unless it embeds `$var`s, whose values are only known now.
 */
export function resolveTransition(
  graph: GraphView,
  state: ConversationState,
  from: CompiledNode,
  index: number,
): Resolution {
  const text = from.transitions[index]!;
  if (text.includes('$')) return resolveTarget(graph, state, from, text);
  const known = branches.get(from);
  if (known?.version === graph.version && known.index === index) return known.resolution;
  const resolution = resolveParsed(graph, state, from, text, from.targets[index]!);
  // Branches depend on the graph alone: a loop takes the same at every pass.
  if (resolution.kind === 'branches') branches.set(from, { version: graph.version, index, resolution });
  return resolution;
}

/** The branches a node's transition led to last, at a version of the graph (see resolveTransition). */
const branches = new WeakMap<CompiledNode, { version: number; index: number; resolution: Resolution }>();

/**
 * Where the transition string `target`, taken from node `from`, leads. `$var`s are embedded first; a
 * whole-string `$var` holds a transition string of its own, which is parsed in turn.
 */
export function resolveTarget(
  graph: GraphView,
  state: ConversationState,
  from: CompiledNode,
  target: string,
): Resolution {
  let text = target.trim();
  if (text.includes('$')) {
    // A `return EXPR` is code of the node's language; a node name reads the same in either.
    const where = { node: from.name, field: 'transition' };
    const valueText = valueTextFor(graph.config, from);
    text = renderTemplate(text, variablesInScope(state), where, valueText).trim();
  }
  return resolveParsed(graph, state, from, target, parseTransition(text), text);
}

function resolveParsed(
  graph: GraphView,
  state: ConversationState,
  from: CompiledNode,
  target: string,
  parsed: TransitionTarget,
  text = target,
): Resolution {
  const has = (name: string): boolean => graph.get(name) !== undefined;
  switch (parsed.kind) {
    case 'quit':
      return { kind: 'quit' };
    case 'return':
      return parsed.expression === undefined
        ? { kind: 'return' }
        : { kind: 'return', expression: parsed.expression };
    case 'variable':
      throw new UserError(
        `node "${from.name}": transition "${target}" resolves to "${text}", which is again a variable`,
        1,
        'a variable used as a transition must hold a node name, `return`, `quit`, `p.*` or `u.n`',
      );
    case 'wildcard': {
      const members = wildcardMembers(parsed.prefix, has).map((name) => graph.get(name)!);
      if (members.length === 0) throw missingNode(graph, from, target, `${parsed.prefix}.a`);
      if (!members[0]!.booleanCondition?.trim())
        return { kind: 'scored', name: scoreWildcard(members, state.visits) };
      return {
        kind: 'branches',
        members: members.map(({ name, booleanCondition }) => {
          const condition = booleanCondition?.trim();
          return condition ? { name, condition } : { name };
        }),
      };
    }
    case 'visit': {
      const members = visitMembers(parsed.base, has);
      if (members.length === 0) throw missingNode(graph, from, target, `${parsed.base}.1`);
      // The first member not visited yet; once all are, the last one repeats.
      const next = members.find((name) => !state.visits[name]) ?? members[members.length - 1]!;
      return { kind: 'node', name: next };
    }
    case 'node':
      if (!has(parsed.name)) throw missingNode(graph, from, target, parsed.name);
      return { kind: 'node', name: parsed.name };
  }
}

/**
 * The member of a `p.*` group whose first member has no boolean condition, chosen by score as AutoGRAMS
 * does (`process_node_id`, autograms/autogram_utils.py): -10000 when none of the member's prerequisite
 * nodes has run, -10000 when one of its blocking nodes has, plus one per run of its up-weight nodes and
 * minus one per run of its down-weight nodes. The highest score wins, the first member on a tie.
 */
export function scoreWildcard(
  members: readonly CompiledNode[],
  visits: Readonly<Record<string, number>>,
): string {
  const runs = (names: readonly string[] = []): number =>
    names.reduce((sum, name) => sum + (visits[name] ?? 0), 0);
  let best = members[0]!;
  let bestScore = -Infinity;
  for (const member of members) {
    let score = runs(member.upWeightNodes) - runs(member.downWeightNodes);
    if (member.prerequisiteNodes?.length && runs(member.prerequisiteNodes) === 0) score -= 10_000;
    if (runs(member.blockingNodes) > 0) score -= 10_000;
    if (score > bestScore) {
      best = member;
      bestScore = score;
    }
  }
  return best.name;
}

function missingNode(graph: GraphView, from: CompiledNode, target: string, wanted: string): UserError {
  const suggestion = closestName(
    wanted,
    graph.nodes().map((n) => n.name),
  );
  return new UserError(
    `node "${from.name}": transition "${target}" leads to "${wanted}", which is not a node of the graph`,
    1,
    suggestion ? `did you mean "${suggestion}"?` : undefined,
  );
}

/** The callable node `fn(…)` a function node calls, or a UserError naming the calling node. */
export function findCallable(graph: GraphView, caller: CompiledNode, fn: string): CompiledNode {
  const callee = graph.nodes().find((n) => n.callable?.fn === fn);
  if (callee) return callee;
  const suggestion = closestName(
    fn,
    graph.nodes().flatMap((n) => (n.callable ? [n.callable.fn] : [])),
  );
  throw new UserError(
    `node "${caller.name}" calls ${fn}(…), but no node is named ${fn}(…)`,
    1,
    suggestion ? `did you mean ${suggestion}(…)?` : 'name a node like `f(a, b)` to make it callable',
  );
}
