/**
 * Host functions lent to code in the sandbox, grouped in namespaces (`self.addNode(…)`). Code inside
 * never holds a reference to anything of the host: every context gets one isolated-vm `Callback`, a
 * plain function inside, through which the guest's stubs send copies of their arguments; the host
 * answers with a copy of the result, or with an error message the stub throws inside.
 */
import ivm from 'isolated-vm';
import type { HostReply } from './guest.js';

/**
 * A function code inside may call synchronously. Its arguments arrive as copies of plain data; what it
 * returns is copied in; what it throws is thrown inside as an `Error` with the same message.
 */
// `any`: host functions declare the argument types they expect (`(name: string) => …`); with
// `unknown[]` such functions would not be assignable.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type HostFunction = (...args: any[]) => unknown;

const NAMESPACE = /^[A-Za-z_$][\w$]*$/;

/** The namespaces lent to one sandbox and the dispatcher that calls into them. */
export class HostFunctions {
  readonly #namespaces = new Map<string, Readonly<Record<string, HostFunction>>>();

  /** Handed to every context; inside it is `(namespace, name, args) => HostReply`. */
  readonly dispatcher = new ivm.Callback((namespace: unknown, name: unknown, args: unknown) => {
    const reply = this.#answer(namespace, name, args);
    try {
      return new ivm.ExternalCopy(reply).copyInto({ release: true });
    } catch (error) {
      // Failing here, not in isolated-vm, makes a host function that returns, say, a function fail
      // inside as a catchable error rather than as a copy error carrying host stack frames.
      const message = `${String(namespace)}.${String(name)} returned a value that cannot be copied into the sandbox: ${(error as Error).message}`;
      return new ivm.ExternalCopy({ ok: false, message }).copyInto({ release: true });
    }
  });

  /** Lends `functions` as `name.fn(…)`, replacing what was lent under `name` before. */
  expose(name: string, functions: Record<string, HostFunction>): void {
    if (!NAMESPACE.test(name))
      throw new TypeError(`cannot expose "${name}" in the sandbox: a namespace must be a plain identifier`);
    for (const [fn, value] of Object.entries(functions))
      if (typeof value !== 'function')
        throw new TypeError(`cannot expose ${name}.${fn} in the sandbox: it is not a function`);
    this.#namespaces.set(name, Object.freeze({ ...functions }));
  }

  /** Withdraws a namespace; code run afterwards no longer sees it. */
  unexpose(name: string): void {
    this.#namespaces.delete(name);
  }

  /** Whether `name` is a lent namespace (it hides a scope variable of the same name). */
  has(name: string): boolean {
    return this.#namespaces.has(name);
  }

  /** `[namespace, function names]` pairs, for the guest to build its stubs from. */
  layout(): [string, string[]][] {
    return [...this.#namespaces].map(([name, functions]) => [name, Object.keys(functions)]);
  }

  #answer(namespace: unknown, name: unknown, args: unknown): HostReply {
    const label = `${String(namespace)}.${String(name)}`;
    const functions = typeof namespace === 'string' ? this.#namespaces.get(namespace) : undefined;
    const fn =
      functions && typeof name === 'string' && Object.hasOwn(functions, name) ? functions[name] : undefined;
    if (!fn) return { ok: false, message: `${label} is not available` };
    let value: unknown;
    try {
      value = fn(...(Array.isArray(args) ? args : []));
    } catch (error) {
      return { ok: false, message: error instanceof Error ? error.message : String(error) };
    }
    if (value instanceof Promise)
      return { ok: false, message: `${label} returned a Promise; host functions must be synchronous` };
    return { ok: true, value };
  }
}
