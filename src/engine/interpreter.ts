/**
 * The AutoGRAMS interpreter: one loop, shared by `reply` (a conversation: runs until a chat node speaks)
 * and `applyFn` (a function call from the host: runs until the function returns). Decisions come from the
 * pure modules (transitions.ts, prompt.ts); this file performs the effects (model calls, sandbox) and
 * emits events. Every step reads the graph through its GraphView, so edits made between steps by a
 * self-referential run take effect at once.
 *
 * A call never changes the state it is given: it works on a copy (see workingCopy) and returns that, so a
 * caller that saves states after each reply can retry or carry on from the last good one when a reply
 * fails.
 */
import { UserError } from '../errors.js';
import { EventBus, type TransitionKind } from '../events.js';
import type { CompiledNode } from '../graph/parse.js';
import { startNodeOf } from '../graph/structure.js';
import type { GraphView } from '../graph/view.js';
import type { ModelSet } from '../llm/types.js';
import { Sandbox, SandboxError, type HostFunction } from '../sandbox/index.js';
import { ACTION_HANDLERS, type ActionContext } from './actions.js';
import { popFrame, pushFrame, setVariable, variablesInScope } from './frames.js';
import { askClassifier, generateReply } from './model-calls.js';
import { callerOf, editableGraph, explainMissingSelf, SELF_NAMESPACE, SelfMode } from './self-mode.js';
import { newState, topFrame, workingCopy, type ConversationState } from './state.js';
import {
  isChatNode,
  planInterjection,
  planTransition,
  resolveTarget,
  type ChoiceQuestion,
} from './transitions.js';

/** Guards against runaway graphs. */
export interface InterpreterLimits {
  /** Nodes run per `reply` or `applyFn` before the run is stopped as a probable endless loop. */
  maxSteps: number;
  /** Function calls nested at once. */
  maxDepth: number;
}

export const DEFAULT_LIMITS: InterpreterLimits = { maxSteps: 10_000, maxDepth: 200 };

/** Host functions lent to code nodes under one name: `name.fn(…)` inside. */
export interface HostNamespace {
  functions: Record<string, HostFunction>;
  /** The code waits for the promises they return (its call still looks synchronous inside). */
  awaited?: boolean;
}

export interface InterpreterOptions {
  graph: GraphView;
  models: ModelSet;
  events?: EventBus;
  /**
   * What the layers above lend code nodes, by namespace: the one way any layer offers host functions
   * (self-referential mode lends `self` through it too).
   */
  host?: Record<string, HostNamespace>;
  limits?: Partial<InterpreterLimits>;
  /**
   * Self-referential mode: code nodes get the `self` API and edit the graph (a StaticGraph is run as a
   * VersionedGraph copy: read `interpreter.graph`). Default: the graph's `config.selfReferential`.
   */
  selfReferential?: boolean;
}

export interface ReplyResult {
  /** What the agent said; '' when the conversation ended without a reply. */
  reply: string;
  state: ConversationState;
  /** True once a `quit` transition was taken: further replies are refused. */
  ended: boolean;
}

export interface ApplyResult {
  value: unknown;
  state: ConversationState;
}

/** A failure inside a node: the message names the node; the original error is the cause. */
export class NodeError extends UserError {
  constructor(
    readonly node: string,
    cause: UserError,
  ) {
    const prefix = `node "${node}"`;
    super(
      cause.message.startsWith(prefix) ? cause.message : `${prefix}: ${cause.message}`,
      cause.exitCode,
      cause.hint,
    );
    this.cause = cause;
  }
}

/** Where the loop goes next: run a node, or take a node's transitions. */
type Next = { run: string } | { leave: string };

/** A classifier question asked on the way out of a node, and the index of the answer it gave. */
type Asked = { question: ChoiceQuestion; index: number };

/** How a run of the loop ended. */
type Outcome = { kind: 'reply'; text: string } | { kind: 'quit' } | { kind: 'returned'; value: unknown };

export class Interpreter {
  readonly graph: GraphView;
  readonly models: ModelSet;
  readonly events: EventBus;
  readonly limits: InterpreterLimits;
  readonly #sandbox: Sandbox;
  /** The working states of the replies and calls in progress. */
  readonly #running = new Set<ConversationState>();
  /** Set in self-referential mode. */
  readonly #self: SelfMode | undefined;

  private constructor(options: InterpreterOptions, sandbox: Sandbox) {
    const editable =
      (options.selfReferential ?? options.graph.config.selfReferential)
        ? editableGraph(options.graph)
        : undefined;
    this.graph = editable ?? options.graph;
    this.models = options.models;
    this.events = options.events ?? new EventBus();
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.#sandbox = sandbox;
    if (editable)
      this.#self = new SelfMode({
        graph: editable,
        events: this.events,
        // The code calling `self` belongs to the run started last (runs share the sandbox one at a time).
        caller: () => {
          const work = [...this.#running].at(-1);
          return work && callerOf(work, this.protectedNodes());
        },
      });
    const lent: Record<string, HostNamespace> = { ...options.host };
    if (this.#self) lent[SELF_NAMESPACE] = { functions: this.#self.api };
    for (const [name, { functions, awaited }] of Object.entries(lent))
      if (awaited) sandbox.exposeAsync(name, functions);
      else sandbox.expose(name, functions);
  }

  /** An interpreter for `graph`, with a sandbox of the graph's limits. Dispose it when done. */
  static async create(options: InterpreterOptions): Promise<Interpreter> {
    const sandbox = await Sandbox.create(options.graph.config.sandbox);
    return new Interpreter(options, sandbox);
  }

  /** A fresh conversation state for this interpreter's graph. */
  newState(): ConversationState {
    return newState(this.graph);
  }

  /**
   * Gives the agent the user's reply and runs until a chat node answers. With no state (or a fresh one)
   * the run starts at the start node, and the agent may speak first: `userText` may then be empty.
   */
  async reply(userText: string | undefined, state?: ConversationState): Promise<ReplyResult> {
    const work = this.#working(state);
    if (work.ended) throw new UserError('this conversation has ended (a quit transition was taken)', 2);
    this.#started();
    work.pendingUser = userText ?? '';
    if (userText) this.events.emit({ type: 'user', text: userText });
    let first: Next;
    if (work.current === undefined) {
      first = { run: this.#startNode() };
      this.events.emit({ type: 'transition', from: '', to: first.run, kind: 'start' });
    } else first = { leave: work.current };
    const outcome = await this.#guarded(work, () => this.#loop(work, first, 'reply'));
    if (outcome.kind === 'reply') return { reply: outcome.text, state: work, ended: false };
    work.ended = true;
    return { reply: '', state: work, ended: true };
  }

  /**
   * Calls the callable node `name(…)` (`name` or `name(a, b)`) with `args` as a local function and runs
   * until it returns. Chat nodes cannot run here: there is no user to answer them.
   */
  async applyFn(name: string, args: unknown[], state?: ConversationState): Promise<ApplyResult> {
    const work = this.#working(state);
    this.#started();
    const fn = name.replace(/\(.*$/s, '').trim();
    const callee = this.graph.nodes().find((n) => n.callable?.fn === fn);
    if (!callee) throw new UserError(`the graph has no callable node ${fn}(…)`, 2, callableHint(this.graph));
    const params = callee.callable!.params;
    if (params.length !== args.length)
      throw new UserError(`${callee.name} takes ${params.length} argument(s), got ${args.length}`, 2);
    pushFrame(work, {
      scope: 'local_function',
      args: Object.fromEntries(params.map((p, i) => [p, args[i]])),
      defaults: this.#defaultPrompts(),
    });
    const resumeAt = work.current;
    const outcome = await this.#guarded(work, () => this.#loop(work, { run: callee.name }, 'fn'));
    if (outcome.kind !== 'returned')
      throw new UserError(
        `${callee.name} ended with quit at node "${work.current}" instead of returning a value`,
      );
    if (resumeAt === undefined) delete work.current;
    else work.current = resumeAt;
    return { value: outcome.value, state: work };
  }

  /**
   * Nodes a self-editing run must not remove: the node a state stands at and every function node on its
   * call stack waiting for a return. Without a state: those of every run in progress (what a `self` edit
   * made from inside a code node must respect).
   */
  protectedNodes(state?: ConversationState): string[] {
    const states = state ? [state] : [...this.#running];
    const names = states.flatMap((s) => [
      ...s.stack.flatMap((frame) => (frame.caller === undefined ? [] : [frame.caller])),
      ...(s.current === undefined ? [] : [s.current]),
    ]);
    return [...new Set(names)];
  }

  /** Releases the sandbox and stops reporting self-referential edits. */
  dispose(): void {
    this.#self?.dispose();
    this.#sandbox.dispose();
  }

  /** A copy of `state` to work on (the caller's stays as it was), or a fresh state. */
  #working(state: ConversationState | undefined): ConversationState {
    if (!state) return this.newState();
    if (state.graphName !== this.graph.name)
      throw new UserError(
        `the saved conversation belongs to the graph "${state.graphName}", not "${this.graph.name}"`,
        2,
        'continue it with the graph it was started with',
      );
    return workingCopy(state);
  }

  #started(): void {
    const g = this.graph;
    this.events.emit({ type: 'run.started', graph: g.name, nodes: g.nodes().length, version: g.version });
  }

  #startNode(): string {
    const start = startNodeOf({ config: this.graph.config, nodes: this.graph.nodes() });
    if (start === undefined || !this.graph.get(start))
      throw new UserError(`the graph has no start node${start ? ` "${start}"` : ''}`, 2);
    return start;
  }

  #defaultPrompts(): { prompt: string; userPrompt: string } {
    return { prompt: this.graph.config.prompt, userPrompt: this.graph.config.userPrompt };
  }

  /**
   * Runs `body` as a run in progress (in self-referential mode: one turn of edits, whose graph is saved
   * in `work`); a UserError is reported as an error event and rethrown naming the node it happened in.
   */
  async #guarded<T>(work: ConversationState, body: () => Promise<T>): Promise<T> {
    this.#running.add(work);
    this.#self?.beginTurn();
    try {
      const result = await body();
      this.#self?.save(work);
      return result;
    } catch (raw) {
      const error = this.#self ? raw : explainMissingSelf(raw);
      // A sandbox error knows its node best: a wildcard condition fails in the member being tried.
      const node = error instanceof SandboxError ? error.node : work.current;
      const wrapped = error instanceof UserError && node !== undefined ? new NodeError(node, error) : error;
      const message = wrapped instanceof Error ? wrapped.message : String(wrapped);
      this.events.emit(node === undefined ? { type: 'error', message } : { type: 'error', message, node });
      throw wrapped;
    } finally {
      this.#running.delete(work);
    }
  }

  /** The loop: run a node, take its transitions, repeat, until a reply, a quit or the host's function returns. */
  async #loop(work: ConversationState, first: Next, mode: 'reply' | 'fn'): Promise<Outcome> {
    let next = first;
    for (let steps = 0; ;) {
      if ('leave' in next) {
        const taken = await this.#leave(work, next.leave);
        if ('kind' in taken) return taken;
        next = taken;
      }
      if (++steps > this.limits.maxSteps)
        throw new UserError(
          `stopped after ${this.limits.maxSteps} steps without ${mode === 'reply' ? 'a reply' : 'a return'}; the graph seems to loop (next node: "${next.run}")`,
          1,
          'make the loop reach a chat node, a return or quit; or raise the step limit if the graph is meant to run this long',
        );
      const { node, previousEntry } = this.#enter(work, next.run);
      const result = await ACTION_HANDLERS[node.action](this.#context(work, node, previousEntry));
      if (result.call !== undefined) {
        if (work.stack.length > this.limits.maxDepth)
          throw new UserError(
            `function calls are nested more than ${this.limits.maxDepth} deep`,
            1,
            'check the recursion ends',
          );
        this.events.emit({ type: 'transition', from: node.name, to: result.call, kind: 'function-call' });
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
        this.events.emit({ type: 'reply', node: node.name, text: result.reply });
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
    work.graphVersion = this.graph.version;
    work.visits[name] = (work.visits[name] ?? 0) + 1;
    work.lastEntered[name] = ++work.steps;
    const depth = work.stack.length - 1;
    this.events.emit({ type: 'node.entered', node: name, action: node.action, depth });
    return previousEntry === undefined ? { node } : { node, previousEntry };
  }

  /**
   * Takes the transitions of the node just run: the interjection question after a chat node, then the
   * node's own transitions. A return pops the frame and takes the calling node's transitions in turn.
   */
  async #leave(work: ConversationState, name: string): Promise<{ run: string } | Outcome> {
    let from = this.#node(name);
    for (;;) {
      if (isChatNode(from)) {
        const interjection = planInterjection(this.graph, work);
        if (interjection) {
          const index = await askClassifier(
            this.models.classifier,
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
      const plan = planTransition(this.graph, from, work);
      let target: string;
      let asked: Asked | undefined;
      if (plan.kind === 'fixed') target = plan.target;
      else {
        const index = await askClassifier(this.models.classifier, from, plan.question, 'transition');
        target = plan.targets[index]!;
        asked = { question: plan.question, index };
      }
      const kindOf = (fallback: TransitionKind): TransitionKind =>
        asked ? 'choice' : target.trim().startsWith('$') ? 'variable' : fallback;
      const resolution = resolveTarget(this.graph, work, from, target);
      switch (resolution.kind) {
        case 'node':
          this.#transition(from, resolution.name, kindOf('single'), asked);
          return { run: resolution.name };
        case 'branches': {
          const chosen = await this.#branch(work, from, resolution.members);
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
          topFrame(work).lastOutput = value;
          work.current = popped.caller;
          from = this.#node(popped.caller);
        }
      }
    }
  }

  #node(name: string): CompiledNode {
    const node = this.graph.get(name);
    if (!node) throw new UserError(`node "${name}" is not in the graph (was it removed?)`);
    return node;
  }

  #transition(from: CompiledNode, to: string, kind: TransitionKind, asked?: Asked): void {
    if (asked === undefined) {
      this.events.emit({ type: 'transition', from: from.name, to, kind });
      return;
    }
    const { question, index } = asked;
    this.events.emit({
      type: 'transition',
      from: from.name,
      to,
      kind,
      question: question.question,
      choices: question.choices,
      answer: question.choices[index] ?? '',
    });
  }

  /** The first wildcard member whose condition holds; the last member is the else and is not evaluated. */
  async #branch(
    work: ConversationState,
    from: CompiledNode,
    members: { name: string; condition?: string }[],
  ) {
    for (const member of members.slice(0, -1)) {
      if (member.condition === undefined)
        throw new UserError(
          `node "${member.name}" needs a boolean condition: it is not the last of its wildcard group`,
        );
      if (await this.#evaluate(work, from, member.condition, member.name)) return member.name;
    }
    return members[members.length - 1]!.name;
  }

  async #evaluate(work: ConversationState, node: CompiledNode, expression: string, label = node.name) {
    return this.#sandbox.evaluate(expression, variablesInScope(work), { node: label });
  }

  /** What a code node printed, line by line, on the event stream. */
  #printed(node: string, logs: readonly string[]): void {
    for (const text of logs) this.events.emit({ type: 'code.log', node, text });
  }

  #set(work: ConversationState, node: string, name: string, value: unknown): void {
    setVariable(work, name, value);
    this.events.emit({ type: 'variable.set', name, value, node });
  }

  /** The effects a node's action may use. */
  #context(work: ConversationState, node: CompiledNode, previousEntry?: number): ActionContext {
    return {
      graph: this.graph,
      node,
      state: work,
      ...(previousEntry !== undefined && { previousEntry }),
      generate: (instruction) => generateReply(this.models.chatbot, this.graph, node, work, instruction),
      evaluate: (expression) => this.#evaluate(work, node, expression),
      runCode: async (code) => {
        const before = variablesInScope(work);
        const result = await this.#sandbox
          .runCode(code, before, { node: node.name })
          .catch((error: unknown) => {
            if (error instanceof SandboxError) this.#printed(node.name, error.logs);
            throw error;
          });
        this.#printed(node.name, result.logs);
        for (const [name, value] of Object.entries(result.scope)) {
          if (!Object.hasOwn(before, name) || !sameValue(before[name], value))
            this.#set(work, node.name, name, value);
        }
        return result.value;
      },
    };
  }
}

/** Values compared as JSON: the sandbox hands back copies, so identity says nothing. */
function sameValue(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

function callableHint(graph: GraphView): string {
  const names = graph.nodes().flatMap((n) => (n.callable ? [n.name] : []));
  return names.length
    ? `callable nodes: ${names.join(', ')}`
    : 'the graph has no callable nodes (named like f(a, b))';
}
