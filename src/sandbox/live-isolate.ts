/**
 * One isolate of a sandbox, the watchdog over it, and the context set up in it by the guest's setup
 * (guest.ts) on first use. The context is set up again once it was dropped (a call failed, or the last
 * evaluation left it tampered with) or the exposed namespaces changed; the whole isolate is replaced
 * after a kill, for memory or by the watchdog.
 */
import type ivm from 'isolated-vm';
import { GUEST_SETUP, type GuestOptions } from './guest.js';
import type { HostFunctions } from './host-functions.js';
import { isolatedVm } from './isolated-vm.js';
import type { SandboxLimits } from './limits.js';
import { Watchdog } from './watchdog.js';

/** `console` keeps at most 1000 lines of at most 10 000 characters. */
const GUEST_OPTIONS: GuestOptions = { maxLogLines: 1000, maxLogChars: 10_000 };

/**
 * How much CPU time past its limit an asynchronous call may use before the watchdog discards the
 * isolate (isolated-vm's own time limit stops it first; see Sandbox).
 */
export const WATCHDOG_GRACE_MS = 250;

/** Time the context's setup (no user code) may take, in milliseconds, whatever the evaluations' limit. */
const SETUP_TIMEOUT_MS = 10_000;

/** A context set up for evaluations, and the namespace layout it was set up with. */
interface GuestContext {
  context: ivm.Context;
  run: ivm.Reference;
  /** HostFunctions.version at setup. */
  version: number;
}

export class LiveIsolate {
  readonly handle: ivm.Isolate;
  readonly watchdog: Watchdog;
  #guest: GuestContext | undefined;

  constructor(limits: Readonly<SandboxLimits>) {
    this.handle = new (isolatedVm().Isolate)({ memoryLimit: limits.memoryMb });
    this.watchdog = new Watchdog(this.handle);
  }

  /** The guest's `run`, in the context set up with `host`'s namespaces as they are now. */
  guestRun(host: HostFunctions): ivm.Reference {
    if (this.#guest?.version === host.version) return this.#guest.run;
    this.dropGuest();
    const context = this.handle.createContextSync();
    const { dispatcher, asyncDispatcher, version } = host;
    const run = context.evalClosureSync(
      GUEST_SETUP,
      [
        dispatcher,
        asyncDispatcher,
        copyOf(GUEST_OPTIONS),
        copyOf(host.layout()),
        copyOf(this.watchdog.buffer),
      ],
      { timeout: SETUP_TIMEOUT_MS, result: { reference: true } },
    );
    this.#guest = { context, run, version };
    return run;
  }

  /** Forgets the context, so that the next evaluation sets up a fresh one. */
  dropGuest(): void {
    const guest = this.#guest;
    this.#guest = undefined;
    // After a kill the isolate took its handles with it.
    if (guest && !this.handle.isDisposed) {
      guest.run.release();
      guest.context.release();
    }
  }

  /** Stops the watchdog and frees the isolate, unless a kill already did. */
  dispose(): void {
    this.watchdog.dispose();
    if (!this.handle.isDisposed) this.handle.dispose();
  }
}

function copyOf<T>(value: T): ivm.Copy<T> {
  return new (isolatedVm().ExternalCopy)(value).copyInto({ release: true });
}
