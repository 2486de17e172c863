/**
 * Stopping long work when the user asks (Ctrl+C): the work is raced against an AbortSignal, so the
 * caller can keep what is done and report it. A leaf module: every layer may import it.
 */

/** What `untilAborted` rejects with when its signal aborts. */
export class Interrupted extends Error {
  override readonly name = 'Interrupted';
  constructor() {
    super('interrupted');
  }
}

/**
 * `work`, or a rejection with Interrupted as soon as `signal` aborts. The work itself cannot be
 * cancelled from outside (model calls already sent, say): it goes on unobserved, and its own failure
 * is then ignored.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  work.catch(() => undefined);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(new Interrupted());
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
