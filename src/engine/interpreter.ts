/**
 * The AutoGRAMS interpreter: what a host holds to talk to an agent. `reply` (a conversation: runs until a
 * chat node speaks) and `applyFn` (a function call from the host: runs until the function returns) both
 * hand a working state to the one loop (run-loop.ts). This file owns what lives longer than one run: the
 * sandbox and what is lent to it, self-referential mode, and the runs in progress.
 *
 * A call never changes the state it is given: it works on a copy (see workingCopy) and returns that, so a
 * caller that saves states after each reply can retry or carry on from the last good one when a reply
 * fails.
 */
import { UserError } from '../errors.js';
import { EventBus } from '../events.js';
import { startNodeOf } from '../graph/structure.js';
import type { GraphView } from '../graph/view.js';
import type { ModelSet } from '../llm/types.js';
import { CodeSandboxes, SandboxError, type HostFunction, type PythonRuntime } from '../sandbox/index.js';
import type { HostCall } from './actions.js';
import { AIPL_NAMESPACE, AiplTemplates, aiplFunctions } from './aipl.js';
import { pushFrame } from './frames.js';
import { isChatNode } from './transitions.js';
import { runLoop, type InterpreterLimits, type Next, type RunResources } from './run-loop.js';
import { callerOf, editableGraph, explainMissingNamespace, SELF_NAMESPACE, SelfMode } from './self-mode.js';
import { newState, standingNodes, stateMismatch, workingCopy, type ConversationState } from './state.js';

export type { InterpreterLimits };

/**
 * Host functions lent to the run under one name: `name.fn(…)` inside code nodes, and to the actions
 * that run through the host (a `goal_loop` node calls `goals.run`).
 */
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
   * What the layers above lend code nodes and actions, by namespace: the one way any layer offers host
   * functions (self-referential mode lends `self` through it too; `goals` runs `goal_loop` nodes).
   */
  host?: Record<string, HostNamespace>;
  /** Overrides the graph's `config.runLimits`. */
  limits?: Partial<InterpreterLimits>;
  /** The runtime Python code runs in; default: the process's, shared by every agent of it. */
  python?: PythonRuntime;
  /** The time `{date}` and `{time}` show in AIPL templates; default: now. */
  clock?: () => Date;
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

export class Interpreter {
  readonly graph: GraphView;
  readonly models: ModelSet;
  readonly events: EventBus;
  readonly limits: InterpreterLimits;
  readonly #sandboxes: CodeSandboxes;
  /** The working states of the replies and calls in progress. */
  readonly #running = new Set<ConversationState>();
  /** Set in self-referential mode. */
  readonly #self: SelfMode | undefined;
  /** Every namespace lent to the run, `self` included. */
  readonly #lent: Record<string, HostNamespace>;
  /** Whether run.started was reported yet. */
  #announced = false;
  readonly #aipl: AiplTemplates;

  private constructor(options: InterpreterOptions, sandboxes: CodeSandboxes) {
    const editable =
      (options.selfReferential ?? options.graph.config.selfReferential)
        ? editableGraph(options.graph)
        : undefined;
    this.graph = editable ?? options.graph;
    this.models = options.models;
    this.events = options.events ?? new EventBus();
    this.limits = { ...options.graph.config.runLimits, ...options.limits };
    this.#sandboxes = sandboxes;
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
    // Like `self`, it acts on the run started last (runs share the sandbox one at a time).
    if (this.graph.config.aipl)
      lent[AIPL_NAMESPACE] = { functions: aiplFunctions(() => [...this.#running].at(-1), this.events) };
    this.#lent = lent;
    this.#aipl = new AiplTemplates(this.graph, this.models, this.events, options.clock ?? (() => new Date()));
    for (const [name, { functions, awaited }] of Object.entries(lent))
      if (awaited) sandboxes.exposeAsync(name, functions);
      else sandboxes.expose(name, functions);
  }

  /** An interpreter for `graph`, with sandboxes of the graph's limits. Dispose it when done. */
  static async create(options: InterpreterOptions): Promise<Interpreter> {
    const sandboxes = await CodeSandboxes.create(options.graph.config.sandbox, options.python);
    return new Interpreter(options, sandboxes);
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
    if (work.current === undefined || !this.#announced) this.#started();
    work.pendingUser = userText ?? '';
    if (userText) {
      this.events.emit({ type: 'user', text: userText });
      // A new turn: AIPL's updates ask afresh, and what they store belongs to it.
      if (work.aipl) work.aipl.turn += 1;
    }
    let first: Next;
    if (work.current === undefined) {
      first = { run: this.#startNode() };
      this.events.emit({ type: 'transition', from: '', to: first.run, kind: 'start' });
    } else first = { leave: work.current };
    const outcome = await this.#guarded(work, () => runLoop(this.#resources(), work, first, 'reply'));
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
    const outcome = await this.#guarded(work, () =>
      runLoop(this.#resources(), work, { run: callee.name }, 'fn'),
    );
    if (outcome.kind !== 'returned')
      throw new UserError(
        `${callee.name} ended with quit at node "${work.current}" instead of returning a value`,
      );
    if (resumeAt === undefined) delete work.current;
    else work.current = resumeAt;
    return { value: outcome.value, state: work };
  }

  /**
   * True when the agent has said its last words in `state`: the chat node it stands at can only quit,
   * and no interjection node could take the user's next message elsewhere. AutoGRAMS takes that quit
   * on the next message, whatever it says; a front end may take it at once (`reply(undefined, state)`)
   * rather than wait for a message that changes nothing.
   */
  saidLastWords(state: ConversationState): boolean {
    const node = state.current === undefined || state.ended ? undefined : this.graph.get(state.current);
    return (
      node !== undefined &&
      isChatNode(node) &&
      node.targets.length === 1 &&
      node.targets[0]!.kind === 'quit' &&
      !this.graph.nodes().some((n) => n.isInterjection)
    );
  }

  /**
   * Nodes a self-editing run must not remove: the node a state stands at and every function node on its
   * call stack waiting for a return. Without a state: those of every run in progress (what a `self` edit
   * made from inside a code node must respect).
   */
  protectedNodes(state?: ConversationState): string[] {
    const states = state ? [state] : [...this.#running];
    return [...new Set(states.flatMap(standingNodes))];
  }

  /** Releases the sandbox and stops reporting self-referential edits. */
  dispose(): void {
    this.#self?.dispose();
    this.#sandboxes.dispose();
  }

  /** A copy of `state` to work on (the caller's stays as it was), or a fresh state. */
  #working(state: ConversationState | undefined): ConversationState {
    if (!state) return this.newState();
    const problem = stateMismatch(state, this.graph);
    if (problem !== undefined)
      throw new UserError(`the state ${problem}`, 2, 'continue it with the graph it was started with');
    return workingCopy(state);
  }

  #resources(): RunResources {
    const { graph, models, events, limits } = this;
    return {
      graph,
      models,
      events,
      limits,
      sandboxes: this.#sandboxes,
      hostFunction: (namespace, fn) => this.#hostFunction(namespace, fn),
      aipl: this.#aipl,
    };
  }

  /**
   * A lent host function for an action, called as code calls it: with copies of its arguments, giving
   * back a copy of its (awaited) result, so nothing of the host stays in the conversation state.
   */
  #hostFunction(namespace: string, fn: string): HostCall | undefined {
    const functions = Object.hasOwn(this.#lent, namespace) ? this.#lent[namespace]!.functions : undefined;
    const lent = functions && Object.hasOwn(functions, fn) ? functions[fn] : undefined;
    if (typeof lent !== 'function') return undefined;
    return async (...args) => structuredClone(await lent(...structuredClone(args)));
  }

  /**
   * Reports a run: a conversation that starts (or resumes in this process), or a function call from the
   * host. The later replies of a conversation are the same run.
   */
  #started(): void {
    this.#announced = true;
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
      const error = explainMissingNamespace(raw, (name) => Object.hasOwn(this.#lent, name));
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
}

function callableHint(graph: GraphView): string {
  const names = graph.nodes().flatMap((n) => (n.callable ? [n.name] : []));
  return names.length
    ? `callable nodes: ${names.join(', ')}`
    : 'the graph has no callable nodes (named like f(a, b))';
}
