/**
 * The sandbox code nodes, conditions and call arguments run in: one isolated-vm isolate per run, reused
 * across nodes, and a fresh context for every evaluation.
 *
 * Why a fresh context each time rather than one context with its globals cleared (which would save
 * about 0.25 ms a call): clearing cannot undo what code does to builtins (`Array.prototype.x = …`,
 * `Math.random = …`) or to the global object itself (`Object.freeze(globalThis)`). The isolate, the
 * expensive part, is kept.
 *
 * The code runs in one asynchronous call (the host stays responsive meanwhile) under isolated-vm's
 * time limit, which counts only time spent running in the isolate, not time waiting on host functions.
 * A few things isolated-vm does after the call (reading an unhandled rejection's `message`, for one)
 * run user getters with no limit at all, so a watchdog also follows the isolate's CPU time and discards
 * the isolate if a call uses more than the limit and a grace period; the next evaluation gets a new
 * isolate, as it does after a memory-limit kill.
 */
import type ivm from 'isolated-vm';
import { GUEST_SETUP, type GuestMode, type GuestOptions, type GuestOutcome } from './guest.js';
import { HostFunctions, type HostFunction } from './host-functions.js';
import { isolatedVm } from './isolated-vm.js';
import { resolveLimits, type SandboxLimits } from './limits.js';
import { memoryError, PLAIN_DATA_HINT, SandboxError, timeoutError } from './sandbox-error.js';
import { CODE_FILENAME, wrapCode, wrapExpression, type CompiledText } from './wrap.js';

/** What a code node produced. */
export interface RunCodeResult {
  /** The completion value of the last statement, as `eval` gives it. */
  value: unknown;
  /** The variables afterwards: those passed in (changed or not) and every new top-level one. */
  scope: Record<string, unknown>;
  /** What the code printed with `console.log` (and `info`, `warn`, `error`, `debug`), one string a call. */
  logs: string[];
}

/** The node an evaluation belongs to, for error messages. */
export interface Where {
  node: string;
}

/** `console` keeps at most 1000 lines of at most 10 000 characters. */
const GUEST_OPTIONS: GuestOptions = { maxLogLines: 1000, maxLogChars: 10_000 };

/** How much CPU time past its limit a call may use before the watchdog discards the isolate. */
const WATCHDOG_GRACE_MS = 250;

/** A path in a message is cut after this many characters (deeply nested data has long ones). */
const MAX_PATH_CHARS = 80;

/** How many texts known to parse are remembered (see #checkSyntax). */
const PARSED_TEXTS_KEPT = 256;

/** isolated-vm's message when its own time limit stops a call. */
const TIMED_OUT = 'Script execution timed out.';

/** A successful guest outcome. */
type Finished = Extract<GuestOutcome, { ok: true }>;

/**
 * Runs JavaScript in an isolate with nothing of Node inside: no `process`, `require`, `import`, timers,
 * network or files. Values cross as copies of plain data. Inside, the code also sees `JSON`, `Math`
 * (and the other ECMAScript builtins except `Atomics`, `SharedArrayBuffer`, `WebAssembly` and
 * `FinalizationRegistry`), a frozen `console` whose output is collected, and the exposed namespaces.
 * Calls are served one at a time, in order.
 */
export class Sandbox {
  /** The limits every evaluation runs under. */
  readonly limits: Readonly<SandboxLimits>;
  readonly #host = new HostFunctions();
  #isolate: ivm.Isolate | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  /** Texts that parsed, oldest first: nodes and conditions repeat, and each check is a compile. */
  readonly #parsed = new Set<string>();
  #disposed = false;

  private constructor(limits: Readonly<SandboxLimits>) {
    this.limits = limits;
  }

  /**
   * A sandbox whose isolate is made on its first evaluation, so a run with no code node never starts
   * one. Throws a UserError (exit code 2) for limits it cannot honour.
   */
  static async create(limits?: Partial<SandboxLimits>): Promise<Sandbox> {
    return new Sandbox(resolveLimits(limits));
  }

  /**
   * Runs a code node's statements with `scope` variables visible as globals. Returns the completion
   * value of the last statement (like eval) and the scope afterwards: assignments to existing variables,
   * new top-level variables (`x = 1`, `var x`, `let x`, `const x`) and in-place mutations
   * (`list.push(4)`, `obj.a = 1`) are all copied back. The code sees only `scope`: nothing is left over
   * from earlier calls. A variable hidden by an exposed namespace of the same name comes back unchanged.
   * @throws SandboxError of every kind.
   */
  runCode(code: string, scope: Record<string, unknown>, where: Where): Promise<RunCodeResult> {
    return this.#serialize(async () => {
      const outcome = await this.#run(wrapCode(code), scope, where.node, 'code');
      const variables = outcome.scope;
      for (const name of Object.keys(scope))
        if (this.#host.has(name) && !Object.hasOwn(variables, name)) variables[name] = scope[name];
      return { value: outcome.value, scope: variables, logs: outcome.logs };
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
    return this.#serialize(
      async () => (await this.#run(wrapExpression(expression), scope, where.node, 'expression')).value,
    );
  }

  /**
   * Makes host functions callable synchronously from inside as `name.fn(…)` (e.g. `self.addNode({…})`),
   * from the next evaluation on. Arguments and results are copies; a host function that throws raises
   * an `Error` inside (catchable there) with the same message.
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
    if (this.#isolate && !this.#isolate.isDisposed) this.#isolate.dispose();
    this.#isolate = undefined;
  }

  #serialize<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#queue.then(work);
    this.#queue = result.catch(() => undefined);
    return result;
  }

  /** The isolate: made on first use, and anew when the last one was killed for memory or by the watchdog. */
  #live(): ivm.Isolate {
    if (this.#disposed) throw new Error('the sandbox was disposed');
    if (!this.#isolate || this.#isolate.isDisposed)
      this.#isolate = new (isolatedVm().Isolate)({ memoryLimit: this.limits.memoryMb });
    return this.#isolate;
  }

  async #run(
    text: CompiledText,
    scope: Record<string, unknown>,
    node: string,
    mode: GuestMode,
  ): Promise<Finished> {
    const isolate = this.#live();
    this.#checkSyntax(isolate, text.standalone, node);
    const scopeCopy = this.#copyIn(scope, node);
    const context = isolate.createContextSync();
    const watchdog = { fired: false };
    let run: ivm.Reference | undefined;
    try {
      const { dispatcher, asyncDispatcher } = this.#host;
      run = context.evalClosureSync(GUEST_SETUP, [dispatcher, asyncDispatcher, copyOf(GUEST_OPTIONS)], {
        timeout: this.limits.timeoutMs,
        result: { reference: true },
      });
      const evaluation = run.apply(undefined, [scopeCopy, copyOf(this.#host.layout()), text.wrapped, mode], {
        timeout: this.limits.timeoutMs,
        result: { copy: true },
      });
      return this.#accept((await this.#watch(isolate, watchdog, evaluation)) as GuestOutcome, node, mode);
    } catch (error) {
      throw this.#failure(error, isolate, watchdog.fired, node);
    } finally {
      // After a kill the isolate took its handles with it.
      if (!isolate.isDisposed) {
        run?.release();
        context.release();
      }
    }
  }

  /**
   * Waits for `work`, discarding the isolate if the CPU time it uses meanwhile passes the limit plus the
   * grace period. CPU time never runs ahead of wall time, so the first look is due only then.
   */
  async #watch<T>(isolate: ivm.Isolate, watchdog: { fired: boolean }, work: Promise<T>): Promise<T> {
    const budgetMs = this.limits.timeoutMs + WATCHDOG_GRACE_MS;
    const start = isolate.cpuTime;
    let timer: NodeJS.Timeout | undefined;
    const lookIn = (ms: number): void => {
      timer = setTimeout(() => {
        if (isolate.isDisposed) return;
        const usedMs = Number((isolate.cpuTime - start) / 1_000_000n);
        if (usedMs < budgetMs) return lookIn(budgetMs - usedMs);
        watchdog.fired = true;
        isolate.dispose();
      }, ms);
    };
    lookIn(budgetMs);
    try {
      return await work;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The user's text must parse on its own before its wrapped form may run (see wrapCode). */
  #checkSyntax(isolate: ivm.Isolate, standalone: string, node: string): void {
    if (this.#parsed.has(standalone)) return;
    try {
      isolate.compileScriptSync(standalone, { filename: CODE_FILENAME }).release();
      this.#parsed.add(standalone);
      if (this.#parsed.size > PARSED_TEXTS_KEPT) this.#parsed.delete(this.#parsed.values().next().value!);
    } catch (error) {
      if (isolate.isDisposed) throw memoryError(node, this.limits);
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

  #copyIn(scope: Record<string, unknown>, node: string): ivm.Copy<Record<string, unknown>> {
    try {
      return copyOf(scope);
    } catch (error) {
      const culprit = Object.keys(scope).find((name) => !isCopyable(scope[name]));
      const detail = culprit
        ? `variable "${culprit}" holds ${describeHostValue(scope[culprit])}, which cannot be copied into the sandbox`
        : `the variables cannot be copied into the sandbox: ${(error as Error).message}`;
      throw new SandboxError('uncopyable', node, detail, PLAIN_DATA_HINT);
    }
  }

  /** Turns what the guest reported into a result or the error it describes. */
  #accept(outcome: GuestOutcome, node: string, mode: GuestMode): Finished {
    if (outcome.ok) return outcome;
    if (outcome.problem === 'syntax')
      throw new SandboxError('syntax', node, `SyntaxError: ${outcome.message}`);
    if (outcome.problem === 'thrown') {
      const detail = outcome.name
        ? `${outcome.name}: ${outcome.message}`
        : `the code threw ${outcome.message}`;
      throw new SandboxError('runtime', node, detail, undefined, outcome.line, outcome.logs);
    }
    const nested = outcome.path !== '' && outcome.path !== outcome.variable;
    const path =
      outcome.path.length > MAX_PATH_CHARS ? `${outcome.path.slice(0, MAX_PATH_CHARS)}…` : outcome.path;
    const detail =
      outcome.variable !== undefined
        ? `variable "${outcome.variable}" holds ${outcome.what}${nested ? ` at ${path}` : ''}`
        : `the value of ${mode === 'code' ? "the code's last statement" : 'the expression'} ` +
          (nested ? `has ${outcome.what} at ${path}` : `is ${outcome.what}`);
    throw new SandboxError('uncopyable', node, `${detail}, which cannot leave the sandbox`, PLAIN_DATA_HINT);
  }

  /** Names what went wrong when a call into the isolate failed. */
  #failure(error: unknown, isolate: ivm.Isolate, stoppedByWatchdog: boolean, node: string): Error {
    if (error instanceof SandboxError) return error;
    if (this.#disposed) return new Error('the sandbox was disposed while code was running');
    if (stoppedByWatchdog) return timeoutError(node, this.limits);
    // A dead isolate we did not kill: isolated-vm disposes it when the memory limit is hit.
    if (isolate.isDisposed) return memoryError(node, this.limits);
    const message = error instanceof Error ? error.message : String(error);
    if (message === TIMED_OUT) return timeoutError(node, this.limits);
    // The code's own throws are caught inside; what still fails a call is a rejection nobody handled.
    return new SandboxError(
      'runtime',
      node,
      `a promise was rejected and nothing handled it: ${message}`,
      'code nodes are synchronous: handle promise rejections, or avoid promises',
    );
  }
}

function copyOf<T>(value: T): ivm.Copy<T> {
  return new (isolatedVm().ExternalCopy)(value).copyInto({ release: true });
}

function isCopyable(value: unknown): boolean {
  try {
    new (isolatedVm().ExternalCopy)(value).release();
    return true;
  } catch {
    return false;
  }
}

function describeHostValue(value: unknown): string {
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return 'a symbol';
  return 'a value that is not plain data';
}
