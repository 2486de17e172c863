/**
 * One reply or host function call in progress: the loop that runs a node, takes its transitions and
 * repeats, until a chat node replies, a quit is taken or the host's function returns. This is where the
 * effects happen (model calls, the sandbox, events, changes to the working state); what to do at each
 * point is decided by pure functions (transitions.ts, prompt.ts, frames.ts), as LangGraph.js keeps its
 * `algo` apart from its loop. Every step reads the graph through its GraphView, so edits made between
 * steps by a self-referential run take effect at once.
 */
import { raiseConfigHint, UserError } from '../errors.js';
import type { EventBus, TransitionKind } from '../events.js';
import type { CompiledNode } from '../graph/parse.js';
import type { GraphConfig } from '../graph/schema.js';
import type { GraphView } from '../graph/view.js';
import type { ModelSet } from '../llm/types.js';
import { SandboxError, type CodeSandboxes } from '../sandbox/index.js';
import { codeLanguage } from '../graph/language.js';
import { ACTION_HANDLERS, type ActionContext, type HostCall } from './actions.js';
import type { AiplTemplates } from './aipl.js';
import { popFrame, setVariable, variablesInScope } from './frames.js';
import { askClassifier, generateReply } from './model-calls.js';
import { topFrame, type ConversationState } from './state.js';
import {
  conditionsAhead,
  isChatNode,
  planInterjection,
  planTransition,
  resolveTransition,
  type ChoiceQuestion,
  type MemberCondition,
} from './transitions.js';

/**
 * Guards against runaway graphs (the graph's `config.runLimits`): nodes run per `reply` or `applyFn`
 * before the run is stopped as a probable endless loop, and function calls nested at once.
 */
export type InterpreterLimits = GraphConfig['runLimits'];

/** What a run uses, lent by its interpreter. */
export interface RunResources {
  graph: GraphView;
  models: ModelSet;
  events: EventBus;
  sandboxes: CodeSandboxes;
  limits: InterpreterLimits;
  /** The host functions lent to the run (the interpreter's `host` namespaces). */
  hostFunction(namespace: string, fn: string): HostCall | undefined;
  /** Renders AIPL templates, in a graph whose config.aipl is set. */
  aipl: AiplTemplates;
}

/** Where the loop goes next: run a node, or take a node's transitions. */
export type Next = { run: string } | { leave: string };

/** How a run of the loop ended. */
export type Outcome =
  { kind: 'reply'; text: string } | { kind: 'quit' } | { kind: 'returned'; value: unknown };

/** A classifier question asked on the way out of a node, and the index of the answer it gave. */
type Asked = { question: ChoiceQuestion; index: number };

/**
 * Conditions the sandbox evaluated with the code node `node` (see conditionsAhead): `results[i]` is
 * what `conditions[i]` came to over the variables the node left, whether it holds or its error.
 */
interface Foreseen {
  node: string;
  conditions: readonly MemberCondition[];
  results: readonly (boolean | Error)[];
}

/** Runs the loop on `work` (changing it) from `first`: until a reply (`reply` mode) or a return (`fn`). */
export function runLoop(
  resources: RunResources,
  work: ConversationState,
  first: Next,
  mode: 'reply' | 'fn',
): Promise<Outcome> {
  return new Run(resources, work).loop(first, mode);
}

class Run {
  readonly #graph: GraphView;
  readonly #models: ModelSet;
  readonly #events: EventBus;
  readonly #sandboxes: CodeSandboxes;
  readonly #limits: InterpreterLimits;
  readonly #hostFunction: RunResources['hostFunction'];
  readonly #aipl: AiplTemplates;
  /** What the code node just run found of the conditions on its way out, for #leave. */
  #foreseen: Foreseen | undefined;

  constructor(
    { graph, models, events, sandboxes, limits, hostFunction, aipl }: RunResources,
    readonly work: ConversationState,
  ) {
    this.#graph = graph;
    this.#models = models;
    this.#events = events;
    this.#sandboxes = sandboxes;
    this.#limits = limits;
    this.#hostFunction = hostFunction;
    this.#aipl = aipl;
  }

  /** The loop: run a node, take its transitions, repeat, until a reply, a quit or the host's function returns. */
  async loop(first: Next, mode: 'reply' | 'fn'): Promise<Outcome> {
    const work = this.work;
    let next = first;
    for (let steps = 0; ;) {
      if ('leave' in next) {
        const taken = await this.#leave(work, next.leave);
        if ('kind' in taken) return taken;
        next = taken;
      }
      if (++steps > this.#limits.maxSteps)
        throw new UserError(
          `stopped after ${this.#limits.maxSteps} steps without ${mode === 'reply' ? 'a reply' : 'a return'}; the graph seems to loop (next node: "${next.run}")`,
          1,
          `make the loop reach a chat node, a return or quit; if the graph is meant to run this long, ${raiseConfigHint('runLimits.maxSteps')}`,
        );
      const { node, previousEntry } = this.#enter(work, next.run);
      // Every node but a transition node is a turn of its frame in AutoGRAMS, with an empty reply unless
      // it is a chat or thought turn (which records its own): a call's is in the caller's frame.
      if (node.action !== 'transition') topFrame(work).lastReply = '';
      const result = await ACTION_HANDLERS[node.action](this.#context(work, node, previousEntry));
      if (result.call !== undefined) {
        if (work.stack.length > this.#limits.maxDepth)
          throw new UserError(
            `function calls are nested more than ${this.#limits.maxDepth} deep`,
            1,
            `check the recursion ends; if it is meant to go this deep, ${raiseConfigHint('runLimits.maxDepth')}`,
          );
        this.#events.emit({ type: 'transition', from: node.name, to: result.call, kind: 'function-call' });
        next = { run: result.call };
        continue;
      }
      if (node.assignTo !== undefined && !result.keepsVariable)
        this.#set(work, node.name, node.assignTo, result.output);
      topFrame(work).lastOutput = result.output;
      if (result.reply !== undefined) {
        if (mode === 'fn')
          throw new UserError(
            'a chat node ran inside a function called from outside the conversation; nobody can answer it',
          );
        this.#events.emit({ type: 'reply', node: node.name, text: result.reply });
        return { kind: 'reply', text: result.reply };
      }
      next = { leave: node.name };
    }
  }

  /** Enters a node: counts the visit, and tells when the node was entered before. */
  #enter(work: ConversationState, name: string): { node: CompiledNode; previousEntry?: number } {
    const node = this.#node(name);
    const previousEntry = work.lastEntered[name];
    work.current = name;
    work.graphVersion = this.#graph.version;
    work.visits[name] = (work.visits[name] ?? 0) + 1;
    work.lastEntered[name] = ++work.steps;
    const depth = work.stack.length - 1;
    this.#events.emit({ type: 'node.entered', node: name, action: node.action, depth });
    return previousEntry === undefined ? { node } : { node, previousEntry };
  }

  /**
   * Takes the transitions of the node just run: the interjection question after a chat node, then the
   * node's own transitions. A return pops the frame and takes the calling node's transitions in turn.
   */
  async #leave(work: ConversationState, name: string): Promise<{ run: string } | Outcome> {
    const foreseen = this.#foreseen?.node === name ? this.#foreseen : undefined;
    this.#foreseen = undefined;
    let from = this.#node(name);
    for (;;) {
      if (isChatNode(from)) {
        const interjection = planInterjection(this.#graph, work);
        if (interjection) {
          const index = await askClassifier(
            this.#models.classifier,
            from,
            interjection.question,
            'interjection',
          );
          const target = interjection.targets[index];
          if (target !== undefined) {
            this.#transition(from, target, 'interjection', { question: interjection.question, index });
            return { run: target };
          }
        }
      }
      const plan = planTransition(this.#graph, from, work);
      let index = 0;
      let asked: Asked | undefined;
      if (plan.kind === 'ask') {
        const answer = await askClassifier(this.#models.classifier, from, plan.question, 'transition');
        index = plan.order[answer]!;
        asked = { question: plan.question, index: answer };
      }
      const kindOf = (fallback: TransitionKind): TransitionKind =>
        asked ? 'choice' : from.targets[index]!.kind === 'variable' ? 'variable' : fallback;
      const resolution = resolveTransition(this.#graph, work, from, index);
      switch (resolution.kind) {
        case 'node':
          this.#transition(from, resolution.name, kindOf('single'), asked);
          return { run: resolution.name };
        case 'branches': {
          const chosen = await this.#branch(work, from, resolution.members, foreseen);
          this.#transition(from, chosen, kindOf('wildcard'), asked);
          return { run: chosen };
        }
        case 'scored':
          this.#transition(from, resolution.name, kindOf('wildcard'), asked);
          return { run: resolution.name };
        case 'quit':
          this.#transition(from, 'quit', 'quit', asked);
          return { kind: 'quit' };
        case 'return': {
          const frame = topFrame(work);
          const value =
            resolution.expression === undefined
              ? frame.lastOutput
              : await this.#evaluate(work, from, resolution.expression);
          if (work.stack.length < 2)
            throw new UserError(
              `node "${from.name}" returns, but no function is running`,
              1,
              'use quit to end the conversation',
            );
          const popped = popFrame(work);
          this.#transition(from, popped.caller ?? '(caller)', 'return', asked);
          if (popped.caller === undefined) return { kind: 'returned', value };
          if (popped.assignTo !== undefined) this.#set(work, popped.caller, popped.assignTo, value);
          // The calling node is a turn again on the return, with an empty reply (function_nodes.py:82-95).
          const caller = topFrame(work);
          caller.lastOutput = value;
          caller.lastReply = '';
          work.current = popped.caller;
          from = this.#node(popped.caller);
        }
      }
    }
  }

  #node(name: string): CompiledNode {
    const node = this.#graph.get(name);
    if (!node) throw new UserError(`node "${name}" is not in the graph (was it removed?)`);
    return node;
  }

  #transition(from: CompiledNode, to: string, kind: TransitionKind, asked?: Asked): void {
    if (asked === undefined) {
      this.#events.emit({ type: 'transition', from: from.name, to, kind });
      return;
    }
    const { question, index } = asked;
    this.#events.emit({
      type: 'transition',
      from: from.name,
      to,
      kind,
      question: question.question,
      choices: question.choices,
      answer: question.choices[index] ?? '',
    });
  }

  /**
   * The first wildcard member whose condition holds; the last member is the else and is not evaluated.
   * What `foreseen` found of the first conditions stands for their evaluation, where they are still the
   * members' (a self-referential run may have edited the graph since).
   */
  async #branch(
    work: ConversationState,
    from: CompiledNode,
    members: { name: string; condition?: string }[],
    foreseen: Foreseen | undefined,
  ) {
    const known = foreseen && stillMembers(foreseen, members) ? foreseen.results : [];
    for (const [i, member] of members.slice(0, -1).entries()) {
      if (member.condition === undefined)
        throw new UserError(
          `node "${member.name}" needs a boolean condition: it is not the last of its wildcard group`,
        );
      const result = known[i] ?? (await this.#holds(work, from, member.condition, member.name));
      if (result instanceof Error) throw result;
      if (result) return member.name;
    }
    return members[members.length - 1]!.name;
  }

  /** Evaluates an expression of `node` (a call argument, a `return EXPR`) in its language. */
  async #evaluate(work: ConversationState, node: CompiledNode, expression: string) {
    return this.#sandbox(node).evaluate(expression, variablesInScope(work), { node: node.name });
  }

  /** Whether the condition of the wildcard member `label` holds, by the truth of its language. */
  async #holds(work: ConversationState, node: CompiledNode, condition: string, label: string) {
    const owner = this.#graph.get(label) ?? node;
    return this.#sandbox(owner).holds(condition, variablesInScope(work), { node: label });
  }

  #sandbox(node: CompiledNode) {
    return this.#sandboxes.for(codeLanguage(this.#graph.config, node));
  }

  /** The frame's prompt as the chatbot reads it: rendered, when it is an AIPL template. */
  async #prompt(work: ConversationState): Promise<string> {
    const { prompt } = topFrame(work);
    if (!this.#graph.config.aipl || prompt === '') return prompt;
    return this.#aipl.render(prompt, work, 'the prompt', 'prompt');
  }

  /** What a code node printed, line by line, on the event stream. */
  #printed(node: string, logs: readonly string[]): void {
    for (const text of logs) this.#events.emit({ type: 'code.log', node, text });
  }

  #set(work: ConversationState, node: string, name: string, value: unknown): void {
    setVariable(work, name, value);
    this.#events.emit({ type: 'variable.set', name, value, node });
  }

  /** The effects a node's action may use. */
  #context(work: ConversationState, node: CompiledNode, previousEntry?: number): ActionContext {
    // The prompt is rendered once a node, before its instruction: what the prompt's updates learn this
    // turn is what the instruction reads.
    let prompt: Promise<string> | undefined;
    const renderedPrompt = () => (prompt ??= this.#prompt(work));
    // Optional members are added after, not spread in: a context is made for every node run.
    const context: ActionContext = {
      graph: this.#graph,
      node,
      state: work,
      generate: async (instruction) =>
        generateReply(this.#models.chatbot, this.#graph, node, work, instruction, await renderedPrompt()),
      evaluate: (expression) => this.#evaluate(work, node, expression),
      hostFunction: this.#hostFunction,
      runCode: (code) => this.#runCode(work, node, code),
    };
    if (previousEntry !== undefined) context.previousEntry = previousEntry;
    if (this.#graph.config.aipl)
      context.aipl = async (source: string) => {
        await renderedPrompt();
        return this.#aipl.render(source, work, `node "${node.name}" instruction`, `node ${node.name}`);
      };
    return context;
  }

  /**
   * Runs a code node's code over the variables in scope, storing those it changed, and returns its
   * value. The conditions on the node's way out, when known already, are evaluated with it (#foreseen).
   */
  async #runCode(work: ConversationState, node: CompiledNode, code: string): Promise<unknown> {
    const before = variablesInScope(work);
    const conditions = conditionsAhead(this.#graph, node);
    const result = await this.#sandbox(node)
      .runCode(code, before, { node: node.name }, conditions)
      .catch((error: unknown) => {
        if (error instanceof SandboxError) this.#printed(node.name, error.logs);
        throw error;
      });
    this.#printed(node.name, result.logs);
    for (const name in result.changed) {
      const value = result.changed[name];
      if (!Object.hasOwn(before, name) || !sameValue(before[name], value))
        this.#set(work, node.name, name, value);
    }
    if (result.conditions.length > 0)
      this.#foreseen = { node: node.name, conditions, results: result.conditions };
    return result.value;
  }
}

/** Whether the conditions foreseen are still those of the first `members`, for the same nodes. */
function stillMembers(foreseen: Foreseen, members: readonly { name: string; condition?: string }[]): boolean {
  return foreseen.results.every((_, i) => {
    const member = members[i];
    const condition = foreseen.conditions[i]!;
    return member?.name === condition.node && member.condition === condition.expression;
  });
}

/** Values compared as JSON: the sandbox hands back copies, so identity says nothing. */
function sameValue(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}
