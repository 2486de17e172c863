/**
 * The sandbox code nodes, conditions and call arguments run in: one isolated-vm isolate per run, and
 * in it one context, set up once and reused by every evaluation.
 *
 * Reuse is safe because the setup freezes every builtin (so `Array.prototype.x = …` or
 * `Math.random = …` cannot reach a later evaluation) and each evaluation first undoes what the last one
 * left on the global object (see guest.ts). What cannot be undone (a global made permanent, a frozen
 * or re-parented global object) the guest detects, and the evaluation runs again in a fresh context:
 * correctness never depends on the code being polite. A fresh context for every evaluation would cost
 * half a millisecond (its setup more), where the evaluation itself takes a few microseconds. The
 * isolate and its context are live-isolate.ts's; what a call came to, result or error, is outcome.ts's.
 *
 * Only the scope variables the code names are copied in (a text that reaches the global object by
 * name, or builds code from strings, gets them all); the others come back as they were passed, without
 * crossing. Texts are wrapped and syntax-checked once and remembered. The boolean conditions a caller
 * will evaluate right after a code node may come with it (`runCode`'s `next`): they are then evaluated
 * in the code's own call, with their variables copied in too, which spares a call into the isolate
 * each; what they come to is what `evaluate` would give.
 *
 * The call is synchronous (an asynchronous call costs some 70 µs of thread hand-offs, ten times the
 * evaluation), so the host waits while code runs, at most for the time limit. Only code that names an
 * asynchronous namespace gets an asynchronous call, which its host functions need in order to wait.
 * A synchronous call's limit is the watchdog's (isolated-vm's own time limit would cost a tenth of the
 * call): on a thread of its own it follows the isolate's CPU time and the call's wall time, host calls
 * included, and discards the isolate once the call has used more than the limit; the next evaluation
 * gets a new isolate, as it does after a memory-limit kill. An asynchronous call runs under
 * isolated-vm's time limit, which counts only time spent running in the isolate, not time waiting on
 * host functions; the watchdog follows its CPU time with a grace period, because a few things
 * isolated-vm does after the call (reading an unhandled rejection's `message`, for one) run user
 * getters with no limit at all.
 */
import type ivm from 'isolated-vm';
import type { Ahead, GuestMode, GuestOutcome } from './guest.js';
import { HostFunctions, type HostFunction } from './host-functions.js';
import { resolveLimits, sandboxCeiling, type SandboxLimits } from './limits.js';
import { LiveIsolate, WATCHDOG_GRACE_MS } from './live-isolate.js';
import {
  acceptOutcome,
  callFailure,
  isCopyable,
  outcomeError,
  uncopyableVariables,
  type Finished,
} from './outcome.js';
import { memoryError, SandboxError } from './sandbox-error.js';
import {
  CODE_FILENAME,
  wrapCode,
  wrapCondition,
  wrapExpression,
  type CompiledText,
  type Mentions,
} from './wrap.js';

/** What a code node produced. */
export interface RunCodeResult {
  /** The completion value of the last statement, as `eval` gives it. */
  value: unknown;
  /**
   * The variables afterwards: those passed in (changed or not) and every new top-level one. Built when
   * first read: a caller that only needs what changed reads `changed`, at no cost per variable passed.
   */
  readonly scope: Record<string, unknown>;
  /**
   * Variables the code names, as they are afterwards: every one it set, declared or changed in place
   * (and perhaps some it only read). Every other variable is as it was passed.
   */
  changed: Record<string, unknown>;
  /** What the code printed with `console.log` (and `info`, `warn`, `error`, `debug`), one string a call. */
  logs: string[];
  /**
   * What the conditions passed with the code came to, in order, as `evaluate` would give them over the
   * variables afterwards: whether each holds, up to the first that holds, or the error of the first
   * that fails. Fewer than were passed (perhaps none) where the sandbox could not evaluate them with the
   * code: the caller evaluates the others itself.
   */
  conditions: (boolean | Error)[];
}

/** A boolean condition that follows a code node, and the node it belongs to (for error messages). */
export interface NextCondition {
  expression: string;
  node: string;
}

/** The node an evaluation belongs to, for error messages. */
export interface Where {
  node: string;
}

/** Conditions to evaluate in a code node's call, as the guest's `run` takes them (see guest.ts). */
interface AheadCall {
  /** JSON text of an Ahead. */
  texts: string;
  /** The variables the conditions name, as the caller passed them. */
  variables: Record<string, unknown>;
}

/** Conditions to evaluate in a code node's call, ready but for the variables (see #aheadTexts). */
interface PreparedAhead {
  /** HostFunctions.version when prepared. */
  version: number;
  /** JSON text of an Ahead; absent when none of the conditions can be evaluated in the code's call. */
  texts?: string;
  names: ReadonlySet<string>;
}

/** How many wrapped texts known to parse are remembered: nodes and conditions repeat, and each check is a compile. */
const TEXTS_KEPT = 256;

/**
 * Runs JavaScript in an isolate with nothing of Node inside: no `process`, `require`, `import`, timers,
 * network or files. Values cross as copies of plain data. Inside, the code also sees `JSON`, `Math`
 * (and the other ECMAScript builtins except `Atomics`, `SharedArrayBuffer`, `WebAssembly` and
 * `FinalizationRegistry`), a frozen `console` whose output is collected, and the exposed namespaces.
 * The builtins are frozen: code cannot change them (strict code that tries gets a TypeError), though
 * it may still give its own objects a `toString` or an error a `name`. Calls are served one at a
 * time, in order.
 */
export class Sandbox {
  /** The limits every evaluation runs under. */
  readonly limits: Readonly<SandboxLimits>;
  /** The user's cap on them (see limits.ts): errors at the cap name the variable that raises it. */
  readonly #ceiling: Readonly<SandboxLimits>;
  readonly #host = new HostFunctions();
  #isolate: LiveIsolate | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  /** Texts that parsed, wrapped, oldest first, for each mode. */
  readonly #texts: Record<GuestMode, Map<string, CompiledText>> = { code: new Map(), expression: new Map() };
  #disposed = false;
  /** What #aheadTexts found for each list of conditions. */
  readonly #preparedAhead = new WeakMap<readonly NextCondition[], PreparedAhead>();
  /** isolated-vm's options for a call (see callOptions), made once: a call only picks its own. */
  readonly #options: Record<'sync' | 'waits', Record<'json' | 'copy', ReturnType<typeof callOptions>>>;

  private constructor(limits: Readonly<SandboxLimits>, ceiling: Readonly<SandboxLimits>) {
    this.limits = limits;
    this.#ceiling = ceiling;
    this.#options = {
      sync: { json: callOptions(limits, false, true), copy: callOptions(limits, false, false) },
      waits: { json: callOptions(limits, true, true), copy: callOptions(limits, true, false) },
    };
  }

  /**
   * A sandbox whose isolate is made on its first evaluation, so a run with no code node never starts
   * one. `limits` are lowered to the user's ceiling (META_AGENT_SANDBOX_TIMEOUT_MS and
   * META_AGENT_SANDBOX_MEMORY_MB; see limits.ts), whatever a file asked for. Throws a UserError (exit
   * code 2) for limits it cannot honour.
   */
  static async create(limits?: Partial<SandboxLimits>): Promise<Sandbox> {
    const ceiling = sandboxCeiling();
    return new Sandbox(resolveLimits(limits, ceiling), ceiling);
  }

  /**
   * Runs a code node's statements with `scope` variables visible as globals. Returns the completion
   * value of the last statement (like eval) and the scope afterwards: assignments to existing variables,
   * new top-level variables (`x = 1`, `var x`, `let x`, `const x`) and in-place mutations
   * (`list.push(4)`, `obj.a = 1`) are all copied back. The code sees only `scope`: nothing is left over
   * from earlier calls. It sees the variables it names (`globalThis[name]` finds only those, unless it
   * also names `globalThis` itself); the others come back as they were passed, as does a variable
   * hidden by an exposed namespace of the same name.
   *
   * `next`: the boolean conditions the caller will evaluate next, in order while none holds, over the
   * variables afterwards. Where neither the code nor they call the host, they are evaluated in the
   * code's own call into the isolate, which spares one call each (see `conditions`).
   * @throws SandboxError of every kind.
   */
  runCode(
    code: string,
    scope: Record<string, unknown>,
    where: Where,
    next: readonly NextCondition[] = [],
  ): Promise<RunCodeResult> {
    return this.#serialize(async () => {
      const ran = await this.#run('code', code, scope, where.node, next);
      const conditions = (ran.ahead ?? []).map((outcome, i) =>
        outcome.ok ? outcome.holds : outcomeError(outcome, next[i]!.node, 'expression'),
      );
      return new CodeResult(ran, scope, conditions);
    });
  }

  /**
   * Evaluates one expression (a boolean condition, a function-call argument, a `return EXPR`) over
   * `scope`. Assignments inside are discarded; so is console output.
   * @throws SandboxError of every kind.
   */
  evaluate(expression: string, scope: Record<string, unknown>, where: Where): Promise<unknown> {
    if (expression.trim() === '')
      return Promise.reject(new SandboxError('syntax', where.node, 'the expression is empty'));
    return this.#serialize(async () => (await this.#run('expression', expression, scope, where.node)).value);
  }

  /**
   * Whether the condition `expression` holds over `scope`, by JavaScript's truth.
   * @throws SandboxError of every kind.
   */
  async holds(expression: string, scope: Record<string, unknown>, where: Where): Promise<boolean> {
    return Boolean(await this.evaluate(expression, scope, where));
  }

  /**
   * Makes host functions callable synchronously from inside as `name.fn(…)` (e.g. `self.addNode({…})`),
   * from the next evaluation on. Arguments and results are copies; a host function that throws raises
   * an `Error` inside (catchable there) with the same message. Time spent in them counts toward the
   * evaluation's time limit.
   */
  expose(name: string, functions: Record<string, HostFunction>): void {
    this.#host.expose(name, functions);
  }

  /**
   * Like `expose`, but the functions may return promises: the code waits for each (its call still
   * looks synchronous inside) and gets the resolved value; a rejection raises an `Error` inside with
   * its message. Waiting is not charged to the time limit, and nothing bounds it: a host function that
   * never settles holds its evaluation (and the ones queued behind it) forever.
   */
  exposeAsync(name: string, functions: Record<string, HostFunction>): void {
    this.#host.expose(name, functions, true);
  }

  /** Withdraws an exposed namespace (either kind) from the next evaluation on. */
  unexpose(name: string): void {
    this.#host.unexpose(name);
  }

  /** Frees the isolate. Evaluations after this (or still queued) throw. */
  dispose(): void {
    this.#disposed = true;
    this.#discard();
  }

  #serialize<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#queue.then(work);
    this.#queue = result.catch(() => undefined);
    return result;
  }

  /** The isolate: made on first use, and anew when the last one was killed for memory or by the watchdog. */
  #live(): LiveIsolate {
    if (this.#disposed) throw new Error('the sandbox was disposed');
    if (this.#isolate && !this.#isolate.handle.isDisposed) return this.#isolate;
    this.#discard();
    this.#isolate = new LiveIsolate(this.limits);
    return this.#isolate;
  }

  #discard(): void {
    const isolate = this.#isolate;
    this.#isolate = undefined;
    isolate?.dispose();
  }

  async #run(
    mode: GuestMode,
    text: string,
    scope: Record<string, unknown>,
    node: string,
    next: readonly NextCondition[] = [],
  ): Promise<Finished> {
    const compiled = this.#compiled(mode, text, node);
    const waits = this.#host.awaitedNames().some((name) => mentions(compiled.mentions, name));
    const ahead = waits ? undefined : this.#ahead(compiled, scope, next);
    // Without conditions ahead, a call answers or throws.
    const outcome =
      (ahead && (await this.#attempt(compiled, scope, mode, waits, node, ahead))) ??
      (await this.#attempt(compiled, scope, mode, waits, node))!;
    return acceptOutcome(outcome, node, mode);
  }

  /**
   * One call, made again in a fresh context when the last evaluation left the context in a state the
   * guest cannot undo. Undefined where a call with conditions ahead failed after its code (see #call).
   */
  async #attempt(
    compiled: CompiledText,
    scope: Record<string, unknown>,
    mode: GuestMode,
    waits: boolean,
    node: string,
    ahead?: AheadCall,
  ): Promise<GuestOutcome | undefined> {
    const isolate = this.#live();
    const outcome = await this.#call(isolate, compiled, scope, mode, waits, node, ahead);
    if (outcome?.ok !== false || outcome.problem !== 'tampered') return outcome;
    isolate.dropGuest();
    return this.#call(isolate, compiled, scope, mode, waits, node, ahead);
  }

  /**
   * The conditions of `next` that the code's call can evaluate: from the first, those that parse and
   * call nothing of the host, over variables JSON carries exactly. None when the code may call the host
   * (the conditions would then run before the caller had seen what it did).
   */
  #ahead(code: CompiledText, scope: Record<string, unknown>, next: readonly NextCondition[]) {
    if (next.length === 0 || !this.#keepsToItself(code.mentions)) return undefined;
    const { texts, names } = this.#aheadTexts(next);
    if (texts === undefined) return undefined;
    const variables = this.#visible(scope, names);
    if (!carriesExactly(variables)) return undefined;
    return { texts, variables };
  }

  /**
   * The Ahead for the conditions of `next` that a code node's call can evaluate, as JSON text, and
   * the variables they name; no text when there are none. Remembered for each list of conditions
   * (a caller passes the same list at every pass of a loop) while the exposed namespaces stay.
   */
  #aheadTexts(next: readonly NextCondition[]): PreparedAhead {
    const known = this.#preparedAhead.get(next);
    if (known?.version === this.#host.version) return known;
    const sources: string[] = [];
    const names = new Set<string>();
    for (const { expression, node } of next) {
      const compiled = this.#parsedExpression(expression, node);
      if (compiled === undefined || !this.#keepsToItself(compiled.mentions)) break;
      sources.push(wrapCondition(expression));
      for (const name of compiled.mentions) names.add(name);
    }
    const ahead: Ahead = { sources, names: [...names] };
    const prepared = {
      version: this.#host.version,
      names,
      ...(sources.length > 0 && { texts: JSON.stringify(ahead) }),
    };
    this.#preparedAhead.set(next, prepared);
    return prepared;
  }

  /**
   * `expression` compiled, or undefined when it does not parse: its error then comes when the caller
   * evaluates it, after the code, as it would have.
   */
  #parsedExpression(expression: string, node: string): CompiledText | undefined {
    if (expression.trim() === '') return undefined;
    try {
      return this.#compiled('expression', expression, node);
    } catch (error) {
      if (error instanceof SandboxError && error.kind === 'syntax') return undefined;
      throw error;
    }
  }

  /** Whether code that mentions `mentioned` can call nothing of the host: it names no exposed namespace. */
  #keepsToItself(mentioned: Mentions): mentioned is ReadonlySet<string> {
    if (mentioned === 'all') return false;
    for (const name of mentioned) if (this.#host.has(name)) return false;
    return true;
  }

  /**
   * One call of the guest's `run`: synchronous, unless the code may wait for asynchronous host
   * functions. The watchdog follows it either way. With conditions `ahead`, a call that fails after the
   * code ran (a condition ran out of time or memory) answers undefined: the caller runs the code again
   * alone, then the conditions one by one, so that each failure is reported as it would have been.
   * Running the code again is unseen: it calls nothing of the host, and what it did the first time
   * was never answered.
   */
  async #call(
    isolate: LiveIsolate,
    compiled: CompiledText,
    scope: Record<string, unknown>,
    mode: GuestMode,
    waits: boolean,
    node: string,
    ahead?: AheadCall,
  ): Promise<GuestOutcome | undefined> {
    const run = isolate.guestRun(this.#host);
    const variables = this.#visible(scope, compiled.mentions);
    const own = ahead && Object.keys(variables).length;
    // The conditions' variables are defined for the code too (after its own, which alone are read
    // back), so that no evaluation of the call deletes a variable the next one defines again; each
    // condition starts again from the same text.
    if (ahead)
      for (const name in ahead.variables)
        if (!Object.hasOwn(variables, name)) define(variables, name, ahead.variables[name]);
    // JSON text crosses as a string, which costs less than isolated-vm's copy of an object.
    const asJson = carriesExactly(variables);
    const args: unknown[] = [asJson ? JSON.stringify(variables) : variables, compiled.wrapped, mode, waits];
    // Without the text, the code runs alone.
    const fused = ahead !== undefined && asJson;
    if (fused) args.push(ahead.texts, own);
    const options = this.#options[waits ? 'waits' : 'sync'][asJson ? 'json' : 'copy'];
    const budgetMs = waits ? this.limits.timeoutMs + WATCHDOG_GRACE_MS : this.limits.timeoutMs;
    const evaluation = isolate.watchdog.start(budgetMs, !waits);
    try {
      const answer: unknown = waits
        ? await run.apply(undefined, args, options)
        : run.applySync(undefined, args, options);
      // An outcome comes as JSON text or an object; an expression's other primitive values come bare.
      if (typeof answer === 'string') return JSON.parse(answer) as GuestOutcome;
      return typeof answer === 'object' && answer !== null
        ? (answer as GuestOutcome)
        : { ok: true, value: answer, scope: {}, logs: [] };
    } catch (error) {
      if (!isolate.handle.isDisposed && !isCopyable(variables)) throw uncopyableVariables(variables, node);
      // A call that failed may have stopped anywhere, the guest's own work included.
      isolate.dropGuest();
      if (fused && !this.#disposed && isolate.watchdog.evaluationsAfter(evaluation) > 0) return undefined;
      throw callFailure(error, {
        isolate: isolate.handle,
        stoppedByWatchdog: isolate.watchdog.fired(evaluation),
        disposed: this.#disposed,
        node,
        limits: this.limits,
        ceiling: this.#ceiling,
      });
    } finally {
      isolate.watchdog.end();
    }
  }

  /** The text wrapped for `mode`, its syntax checked the first time it is seen. */
  #compiled(mode: GuestMode, text: string, node: string): CompiledText {
    const texts = this.#texts[mode];
    const known = texts.get(text);
    if (known) return known;
    const compiled = mode === 'code' ? wrapCode(text) : wrapExpression(text);
    this.#checkSyntax(this.#live().handle, compiled.standalone, node);
    texts.set(text, compiled);
    if (texts.size > TEXTS_KEPT) texts.delete(texts.keys().next().value!);
    return compiled;
  }

  /** The user's text must parse on its own before its wrapped form may run (see wrapCode). */
  #checkSyntax(isolate: ivm.Isolate, standalone: string, node: string): void {
    try {
      isolate.compileScriptSync(standalone, { filename: CODE_FILENAME }).release();
    } catch (error) {
      if (isolate.isDisposed) throw memoryError(node, this.limits, this.#ceiling);
      const message = error instanceof Error ? error.message : String(error);
      const at = / \[[^\]]*:(\d+):\d+\]$/.exec(message);
      const name = error instanceof Error ? error.name : 'SyntaxError';
      throw new SandboxError(
        'syntax',
        node,
        `${name}: ${at ? message.slice(0, at.index) : message}`,
        undefined,
        at ? Number(at[1]) : undefined,
      );
    }
  }

  /** The variables the text mentions (one named as an exposed namespace is read through it, guest.ts). */
  #visible(scope: Record<string, unknown>, mentioned: Mentions): Record<string, unknown> {
    const names = mentioned === 'all' ? Object.keys(scope) : mentioned;
    const variables: Record<string, unknown> = {};
    for (const name of names) if (Object.hasOwn(scope, name)) define(variables, name, scope[name]);
    return variables;
  }
}

/** A RunCodeResult, whose scope afterwards is built when first read. */
class CodeResult implements RunCodeResult {
  readonly value: unknown;
  readonly changed: Record<string, unknown>;
  readonly logs: string[];
  readonly conditions: (boolean | Error)[];
  readonly #before: Record<string, unknown>;
  #after: Record<string, unknown> | undefined;

  constructor(ran: Finished, before: Record<string, unknown>, conditions: (boolean | Error)[]) {
    this.value = ran.value;
    this.changed = ran.scope;
    this.logs = ran.logs;
    this.conditions = conditions;
    this.#before = before;
  }

  get scope(): Record<string, unknown> {
    return (this.#after ??= withChanges(this.#before, this.changed));
  }
}

/**
 * isolated-vm's options for a call that `waits` for the host or not, whose variables cross as JSON text
 * or as isolated-vm's copy. isolated-vm's time limit costs a tenth of a synchronous call: there the
 * watchdog is the limit, bounding wall time (host calls included). An asynchronous call, whose waits
 * for the host are not charged, keeps isolated-vm's limit, and the watchdog follows it with a grace
 * period.
 */
function callOptions(limits: Readonly<SandboxLimits>, waits: boolean, asJson: boolean) {
  return {
    ...(waits && { timeout: limits.timeoutMs }),
    ...(!asJson && { arguments: { copy: true } as const }),
    result: { copy: true },
  } as const;
}

/**
 * A new object with the variables of `scope`, those in `changes` replaced or added. A loop: spreading a
 * large object built key by key (which V8 keeps as a dictionary) is twice as slow.
 */
function withChanges(
  scope: Record<string, unknown>,
  changes: Record<string, unknown>,
): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  const names = Object.keys(scope);
  for (let i = 0; i < names.length; i++) define(result, names[i]!, scope[names[i]!]);
  for (const name in changes) define(result, name, changes[name]);
  return result;
}

/** Sets `object[name]`, as an own property even for `__proto__`. */
function define(object: Record<string, unknown>, name: string, value: unknown): void {
  if (name === '__proto__')
    Object.defineProperty(object, name, { value, writable: true, enumerable: true, configurable: true });
  else object[name] = value;
}

/** Nesting past which a value goes to isolated-vm's copy, which also refuses cycles. */
const JSON_DEPTH = 64;

/**
 * Whether JSON carries `value` exactly: strings, booleans, null, finite numbers but -0, and arrays
 * without holes and plain objects of those. Anything else (undefined, NaN, a Date, a Map, a cycle) goes
 * as isolated-vm copies it.
 */
function carriesExactly(value: unknown, depth = 0): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'object': {
      if (value === null) return true;
      if (depth >= JSON_DEPTH) return false;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++)
          if (!(i in value) || !carriesExactly(value[i], depth + 1)) return false;
        return true;
      }
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return false;
      const record = value as Record<string, unknown>;
      for (const name in record)
        if (Object.hasOwn(record, name) && !carriesExactly(record[name], depth + 1)) return false;
      return true;
    }
    default:
      return false;
  }
}

function mentions(mentioned: Mentions, name: string): boolean {
  return mentioned === 'all' || mentioned.has(name);
}
