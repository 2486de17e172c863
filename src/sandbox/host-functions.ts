/**
 * Host functions lent to code in the sandbox, grouped in namespaces (`self.addNode(…)`). Code inside
 * calls them synchronously and never holds anything of the host: the guest's stubs send copies of
 * their arguments through one of two dispatchers, kept in the guest's closure, and the host answers
 * with a copy of the result, or with an error message the stub throws inside.
 *
 * - synchronous namespaces go through an isolated-vm `Callback` (a plain function inside);
 * - asynchronous ones through a `Reference` to an async host function, called with `applySyncPromise`:
 *   the isolate waits for the promise. Either way the time spent in the host is not charged to the
 *   evaluation's time limit (isolated-vm pauses its timers while the isolate waits on the host).
 */
import type ivm from 'isolated-vm';
import type { HostReply } from './guest.js';
import { isolatedVm } from './isolated-vm.js';

/**
 * A function code inside may call synchronously. Its arguments arrive as copies of plain data; what it
 * returns is copied in; what it throws is thrown inside as an `Error` with the same message.
 */
// `any`: host functions declare the argument types they expect (`(name: string) => …`); with
// `unknown[]` such functions would not be assignable.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type HostFunction = (...args: any[]) => unknown;

/** `[namespace, function names, asynchronous]`, what the guest builds its stubs from. */
export type NamespaceLayout = [string, string[], boolean];

const NAMESPACE = /^[A-Za-z_$][\w$]*$/;

interface Namespace {
  functions: Readonly<Record<string, HostFunction>>;
  /** Whether the code waits for the promises its functions return. */
  awaited: boolean;
}

/** The namespaces lent to one sandbox and the dispatchers that call into them. */
export class HostFunctions {
  readonly #namespaces = new Map<string, Namespace>();
  #version = 0;
  #dispatcher: ivm.Callback | undefined;
  #asyncDispatcher: ivm.Reference | undefined;
  #awaited: { version: number; names: readonly string[] } | undefined;

  // The dispatchers are made for the first evaluation: namespaces are lent before any, and a run
  // without code never loads isolated-vm.

  /** For synchronous namespaces; inside it is `(namespace, name, args) => HostReply`. */
  get dispatcher(): ivm.Callback {
    const { Callback } = isolatedVm();
    this.#dispatcher ??= new Callback((namespace: unknown, name: unknown, args: unknown) =>
      copyReply(namespace, name, this.#answer(namespace, name, args, false)),
    );
    return this.#dispatcher;
  }

  /** For asynchronous namespaces; inside, `applySyncPromise(undefined, [namespace, name, args])`. */
  get asyncDispatcher(): ivm.Reference {
    const { Reference } = isolatedVm();
    this.#asyncDispatcher ??= new Reference(async (namespace: unknown, name: unknown, args: unknown) =>
      copyReply(namespace, name, await this.#answer(namespace, name, args, true)),
    );
    return this.#asyncDispatcher;
  }

  /**
   * Lends `functions` as `name.fn(…)`, replacing what was lent under `name` before; `awaited`: the code
   * waits for the promises they return (else a returned promise is an error inside).
   */
  expose(name: string, functions: Record<string, HostFunction>, awaited = false): void {
    if (!NAMESPACE.test(name))
      throw new TypeError(`cannot expose "${name}" in the sandbox: a namespace must be a plain identifier`);
    for (const [fn, value] of Object.entries(functions))
      if (typeof value !== 'function')
        throw new TypeError(`cannot expose ${name}.${fn} in the sandbox: it is not a function`);
    this.#namespaces.set(name, { functions: Object.freeze({ ...functions }), awaited });
    this.#version++;
  }

  /** Withdraws a namespace; code run afterwards no longer sees it. */
  unexpose(name: string): void {
    if (this.#namespaces.delete(name)) this.#version++;
  }

  /** Changes whenever the layout does: a context set up with an older one must be set up again. */
  get version(): number {
    return this.#version;
  }

  /** The namespaces whose functions the code waits for (asked at every evaluation: kept until the layout changes). */
  awaitedNames(): readonly string[] {
    if (this.#awaited?.version !== this.#version)
      this.#awaited = {
        version: this.#version,
        names: [...this.#namespaces].flatMap(([name, { awaited }]) => (awaited ? [name] : [])),
      };
    return this.#awaited.names;
  }

  /** Whether `name` is a lent namespace (it hides a scope variable of the same name). */
  has(name: string): boolean {
    return this.#namespaces.has(name);
  }

  layout(): NamespaceLayout[] {
    return [...this.#namespaces].map(([name, { functions, awaited }]) => [
      name,
      Object.keys(functions),
      awaited,
    ]);
  }

  /**
   * Calls a lent function for code that waits for every call it makes (the Python sandbox's child
   * blocks on each): a reply, or for an asynchronous namespace possibly the promise of one.
   */
  call(namespace: string, name: string, args: unknown[]): HostReply | Promise<HostReply> {
    return this.#answer(namespace, name, args, this.#namespaces.get(namespace)?.awaited ?? false);
  }

  /** Calls the function: a reply, or when the caller waits, possibly the promise of one. */
  #answer(namespace: unknown, name: unknown, args: unknown, waits: false): HostReply;
  #answer(namespace: unknown, name: unknown, args: unknown, waits: boolean): HostReply | Promise<HostReply>;
  #answer(namespace: unknown, name: unknown, args: unknown, waits: boolean): HostReply | Promise<HostReply> {
    const label = `${String(namespace)}.${String(name)}`;
    const lent = typeof namespace === 'string' ? this.#namespaces.get(namespace) : undefined;
    const fn =
      lent && typeof name === 'string' && Object.hasOwn(lent.functions, name)
        ? lent.functions[name]
        : undefined;
    if (!lent || !fn) return { ok: false, message: `${label} is not available` };
    let value: unknown;
    try {
      value = fn(...(Array.isArray(args) ? args : []));
    } catch (error) {
      return refusal(error);
    }
    if (!(value instanceof Promise)) return { ok: true, value };
    if (waits) return value.then((resolved: unknown) => ({ ok: true, value: resolved }), refusal);
    // Nobody will wait for it; keep its rejection from going unhandled.
    value.catch(() => undefined);
    return { ok: false, message: `${label} returned a Promise; host functions must be synchronous` };
  }
}

function refusal(error: unknown): HostReply {
  return { ok: false, message: error instanceof Error ? error.message : String(error) };
}

/** The reply as a copy for the isolate; a result that cannot be copied becomes an error inside. */
function copyReply(namespace: unknown, name: unknown, reply: HostReply): ivm.Copy<HostReply> {
  const { ExternalCopy } = isolatedVm();
  try {
    return new ExternalCopy(reply).copyInto({ release: true });
  } catch (error) {
    // Failing here, not in isolated-vm, makes the code see a catchable error rather than a copy
    // error carrying host stack frames.
    const refused: HostReply = {
      ok: false,
      message: `${String(namespace)}.${String(name)} returned a value that cannot be copied into the sandbox: ${(error as Error).message}`,
    };
    return new ExternalCopy(refused).copyInto({ release: true });
  }
}
