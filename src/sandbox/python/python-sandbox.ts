/**
 * The Python sandbox: code nodes, conditions and call arguments written in Python, run by CPython in
 * WebAssembly (Pyodide) in a contained child process (python-runtime.ts). It offers what the JavaScript
 * sandbox offers (sandbox.ts), with the same errors, limits and host namespaces, so the engine can hand
 * either one a node's code.
 *
 * Values cross as JSON: the variables in, the variables the code changed and its value out. A value
 * JSON cannot hold (a set, a function of the host) is an error naming its variable. A host namespace
 * is an object in Python whose functions take snake_case names too: `self.add_node(name='x', …)` calls
 * `self.addNode({ name: 'x', … })` (keyword arguments become one object, its keys camelCased).
 */
import { HostFunctions, type HostFunction } from '../host-functions.js';
import { resolveLimits, sandboxCeiling, type SandboxLimits } from '../limits.js';
import { memoryError, SandboxError, timeoutError } from '../sandbox-error.js';
import type { NextCondition, RunCodeResult, Where } from '../sandbox.js';
import type { Answer, EvaluationMode, Failure } from './protocol.js';
import { pythonRuntime, PythonStartError, type Ended, type PythonRuntime } from './python-runtime.js';

const JSON_HINT =
  'values crossing the sandbox must be JSON: numbers, strings, booleans, None, lists, and dicts with ' +
  'string keys; convert the others (list(a_set), str(x)), or keep them inside a function';

export class PythonSandbox {
  /** The limits every evaluation runs under. */
  readonly limits: Readonly<SandboxLimits>;
  readonly #ceiling: Readonly<SandboxLimits>;
  readonly #host = new HostFunctions();
  readonly #runtime: PythonRuntime;
  #disposed = false;

  private constructor(
    limits: Readonly<SandboxLimits>,
    ceiling: Readonly<SandboxLimits>,
    runtime: PythonRuntime,
  ) {
    this.limits = limits;
    this.#ceiling = ceiling;
    this.#runtime = runtime;
  }

  /**
   * A Python sandbox under `limits` (capped as the JavaScript sandbox's are, see limits.ts), whose code
   * runs in `runtime`: by default the process's, shared by every agent of it. Python's state lives as
   * long as its runtime, so code that can reach the runtime's internals can reach every evaluation made
   * in it: agents that must not touch each other's code (a server's owners) get runtimes of their own.
   * Cheap: a runtime starts on its first evaluation.
   */
  static create(limits?: Partial<SandboxLimits>, runtime: PythonRuntime = pythonRuntime()): PythonSandbox {
    const ceiling = sandboxCeiling();
    return new PythonSandbox(resolveLimits(limits, ceiling), ceiling, runtime);
  }

  /**
   * Runs a code node's statements over `scope`. The value is that of the last statement when it is an
   * expression, or of the variable a last `x = …` sets; new and changed variables come back, changes in
   * place included. What the code printed comes back as `logs`.
   *
   * `next`: the conditions the caller evaluates next, in order while none holds. Where neither the code
   * nor they name a lent namespace (a host call may change the graph they come from), they are
   * evaluated in the code's own round trip to the runtime, each over a fresh copy of the variables as
   * the code left them, with an evaluation's time of its own; `conditions` says what they came to.
   * Where the code or a condition runs out of time or kills the runtime, the code runs again alone
   * (a failure of the code's own then comes after about twice its limit), and the caller meets a
   * condition's failure when it evaluates it.
   * @throws SandboxError of every kind.
   */
  async runCode(
    code: string,
    scope: Record<string, unknown>,
    where: Where,
    next: readonly NextCondition[] = [],
  ): Promise<RunCodeResult> {
    const ahead = this.#ahead(code, next);
    const answer = await this.#run('code', code, scope, where.node, ahead);
    const changed = answer.changed;
    // What the runner answers is Python's to forge: no more conditions than were asked for are read.
    const conditions = (answer.conditions ?? [])
      .slice(0, ahead.length)
      .map((outcome, i) =>
        outcome.ok ? outcome.holds : this.#failure(outcome, ahead[i]!.node, 'condition', []),
      );
    return {
      value: answer.value,
      changed,
      logs: answer.logs,
      conditions,
      get scope() {
        return { ...scope, ...changed };
      },
    };
  }

  /** Evaluates one Python expression over `scope`. @throws SandboxError of every kind. */
  async evaluate(expression: string, scope: Record<string, unknown>, where: Where): Promise<unknown> {
    if (expression.trim() === '') throw new SandboxError('syntax', where.node, 'the expression is empty');
    return (await this.#run('expression', expression, scope, where.node)).value;
  }

  /**
   * Whether the condition `expression` holds over `scope`, by Python's truth (AutoGRAMS' `if
   * condition:`): an empty list, dict or string does not. @throws SandboxError of every kind.
   */
  async holds(expression: string, scope: Record<string, unknown>, where: Where): Promise<boolean> {
    if (expression.trim() === '') throw new SandboxError('syntax', where.node, 'the expression is empty');
    return (await this.#run('condition', expression, scope, where.node)).value === true;
  }

  /** Lends host functions as `name.fn(…)` from the next evaluation on (see HostFunctions). */
  expose(name: string, functions: Record<string, HostFunction>): void {
    this.#host.expose(name, functions);
  }

  /** Like `expose`, for functions that return promises: Python waits for each. */
  exposeAsync(name: string, functions: Record<string, HostFunction>): void {
    this.#host.expose(name, functions, true);
  }

  unexpose(name: string): void {
    this.#host.unexpose(name);
  }

  /** Evaluations after this throw; the process's runtime stays for other sandboxes. */
  dispose(): void {
    this.#disposed = true;
  }

  /** The conditions of `next` that may be evaluated in the code's own call (see runCode). */
  #ahead(code: string, next: readonly NextCondition[]): readonly NextCondition[] {
    if (next.length === 0) return next;
    const names = namesOf(code, next);
    const reachesHost = names === 'all' || this.#host.layout().some(([name]) => names.has(name));
    return reachesHost ? [] : next;
  }

  async #run(
    mode: EvaluationMode,
    code: string,
    scope: Record<string, unknown>,
    node: string,
    ahead: readonly NextCondition[] = [],
  ): Promise<Extract<Answer, { ok: true }> & { logs: string[] }> {
    if (this.#disposed) throw new Error('the sandbox was disposed');
    const namespaces = Object.fromEntries(this.#host.layout().map(([name, functions]) => [name, functions]));
    let ended: Ended;
    try {
      ended = await this.#runtime.evaluate({
        mode,
        code,
        scope: scopeText(scope, namesOf(code, ahead), node),
        namespaces,
        ...(ahead.length > 0 && { conditions: ahead.map((condition) => condition.expression) }),
        timeoutMs: this.limits.timeoutMs,
        memoryMb: this.limits.memoryMb,
        callHost: (namespace, fn, args) => this.#host.call(namespace, fn, args),
      });
    } catch (error) {
      if (error instanceof PythonStartError) throw new SandboxError('runtime', node, error.message);
      throw error;
    }
    // The code or a condition after it did not end: the code runs again alone, so that its own failure
    // is the code's, and a condition's comes when the caller evaluates it.
    if (ended.kind !== 'answered' && ahead.length > 0) return this.#run(mode, code, scope, node);
    if (ended.kind === 'timeout') throw timeoutError(node, this.limits, this.#ceiling);
    if (ended.kind === 'memory') throw memoryError(node, this.limits, this.#ceiling);
    if (ended.kind === 'failed')
      throw new SandboxError(
        'runtime',
        node,
        `the Python runtime failed: ${ended.message}`,
        'deep recursion can exhaust its stack; the next evaluation starts a new runtime',
        undefined,
        ended.logs,
      );
    if (!ended.answer.ok) throw this.#failure(ended.answer, node, mode, ended.logs);
    return { ...ended.answer, logs: ended.logs };
  }

  /** The error a failed evaluation of `node` is. */
  #failure(answer: Failure, node: string, mode: EvaluationMode, logs: string[]): SandboxError {
    switch (answer.kind) {
      case 'memory':
        return memoryError(node, this.limits, this.#ceiling);
      case 'uncopyable':
        return new SandboxError(
          'uncopyable',
          node,
          answer.name
            ? `variable "${answer.name}" holds a ${answer.type}, which JSON cannot hold`
            : `the value of ${mode === 'code' ? "the code's last statement" : 'the expression'} is a ${answer.type}, which JSON cannot hold`,
          JSON_HINT,
          undefined,
          logs,
        );
      default:
        return new SandboxError(answer.kind, node, answer.message, undefined, answer.line ?? undefined, logs);
    }
  }
}

/** Names the code may read a variable by dynamically: it then gets every variable. */
const DYNAMIC_NAMES = /\b(?:globals|locals|vars|dir|eval|exec|__dict__|__builtins__)\b/;
const IDENTIFIER = /[\p{L}_][\p{L}\p{N}_]*/gu;
/** Texts whose names are remembered: nodes and conditions repeat. */
const TEXTS_KEPT = 256;
const namesOfText = new Map<string, ReadonlySet<string> | 'all'>();

/**
 * The names `code` spells (in strings too: a superset), or 'all' when it may find variables by name at
 * run time. Only those variables cross: a scope of a thousand costs what the code reads of it.
 */
function mentionedNames(code: string): ReadonlySet<string> | 'all' {
  let names = namesOfText.get(code);
  if (names === undefined) {
    names = DYNAMIC_NAMES.test(code) ? 'all' : new Set(code.match(IDENTIFIER));
    namesOfText.set(code, names);
    if (namesOfText.size > TEXTS_KEPT) namesOfText.delete(namesOfText.keys().next().value!);
  }
  return names;
}

/** The names the code and the conditions after it spell, or 'all' (see mentionedNames). */
function namesOf(code: string, conditions: readonly NextCondition[]): ReadonlySet<string> | 'all' {
  const names = mentionedNames(code);
  if (conditions.length === 0 || names === 'all') return names;
  const all = new Set(names);
  for (const { expression } of conditions) {
    const more = mentionedNames(expression);
    if (more === 'all') return more;
    for (const name of more) all.add(name);
  }
  return all;
}

/** The variables `names` picks, as a JSON object's text; one JSON cannot hold is an error naming it. */
function scopeText(scope: Record<string, unknown>, names: ReadonlySet<string> | 'all', node: string): string {
  const parts: string[] = [];
  for (const name of names === 'all'
    ? Object.keys(scope)
    : [...names].filter((n) => Object.hasOwn(scope, n))) {
    let text: string | undefined;
    try {
      text = scope[name] === undefined ? 'null' : (JSON.stringify(scope[name]) as string | undefined);
    } catch {
      text = undefined;
    }
    if (text === undefined)
      throw new SandboxError(
        'uncopyable',
        node,
        `variable "${name}" holds a value JSON cannot hold, so Python cannot see it`,
        JSON_HINT,
      );
    parts.push(`${JSON.stringify(name)}:${text}`);
  }
  return `{${parts.join(',')}}`;
}
