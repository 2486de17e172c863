/**
 * The sandboxes a run's code goes to, one a language: JavaScript in isolated-vm (sandbox.ts) and Python
 * in Pyodide (python/python-sandbox.ts). Host namespaces are lent to both; the Python one is made when
 * first asked for, so a run without Python never knows it exists.
 */
import type { HostFunction } from './host-functions.js';
import type { SandboxLimits } from './limits.js';
import type { PythonRuntime } from './python/python-runtime.js';
import { PythonSandbox } from './python/python-sandbox.js';
import { Sandbox, type NextCondition, type RunCodeResult, type Where } from './sandbox.js';

/** What the engine asks of a sandbox, whatever its language. */
export interface CodeRunner {
  runCode(
    code: string,
    scope: Record<string, unknown>,
    where: Where,
    next?: readonly NextCondition[],
  ): Promise<RunCodeResult>;
  evaluate(expression: string, scope: Record<string, unknown>, where: Where): Promise<unknown>;
  /** Whether a boolean condition holds, by the truth of the sandbox's language. */
  holds(expression: string, scope: Record<string, unknown>, where: Where): Promise<boolean>;
}

interface Lent {
  functions: Record<string, HostFunction>;
  awaited: boolean;
}

export class CodeSandboxes {
  readonly javascript: Sandbox;
  readonly #limits: Partial<SandboxLimits> | undefined;
  readonly #runtime: PythonRuntime | undefined;
  readonly #lent = new Map<string, Lent>();
  #python: PythonSandbox | undefined;

  private constructor(javascript: Sandbox, limits?: Partial<SandboxLimits>, runtime?: PythonRuntime) {
    this.javascript = javascript;
    this.#limits = limits;
    this.#runtime = runtime;
  }

  /**
   * Sandboxes under the graph's `limits`, capped as limits.ts says; Python runs in `runtime`, or the
   * process's (see PythonSandbox.create).
   */
  static async create(limits?: Partial<SandboxLimits>, runtime?: PythonRuntime): Promise<CodeSandboxes> {
    return new CodeSandboxes(await Sandbox.create(limits), limits, runtime);
  }

  /** The sandbox for code in `language`. */
  for(language: 'javascript' | 'python'): CodeRunner {
    return language === 'python' ? this.#pythonSandbox() : this.javascript;
  }

  expose(name: string, functions: Record<string, HostFunction>): void {
    this.#lend(name, { functions, awaited: false });
  }

  exposeAsync(name: string, functions: Record<string, HostFunction>): void {
    this.#lend(name, { functions, awaited: true });
  }

  unexpose(name: string): void {
    this.#lent.delete(name);
    this.javascript.unexpose(name);
    this.#python?.unexpose(name);
  }

  dispose(): void {
    this.javascript.dispose();
    this.#python?.dispose();
  }

  #lend(name: string, lent: Lent): void {
    this.#lent.set(name, lent);
    lendTo(this.javascript, name, lent);
    if (this.#python) lendTo(this.#python, name, lent);
  }

  #pythonSandbox(): PythonSandbox {
    if (this.#python) return this.#python;
    const python = PythonSandbox.create(this.#limits, this.#runtime);
    for (const [name, lent] of this.#lent) lendTo(python, name, lent);
    return (this.#python = python);
  }
}

function lendTo(sandbox: Sandbox | PythonSandbox, name: string, { functions, awaited }: Lent): void {
  if (awaited) sandbox.exposeAsync(name, functions);
  else sandbox.expose(name, functions);
}
