/**
 * Discards an isolate when one evaluation uses more time than its budget: it is the time limit of
 * synchronous evaluations (cheaper than isolated-vm's, which starts a timer for every call), and it
 * stands behind isolated-vm's limit on asynchronous ones where that does not reach: after a call,
 * isolated-vm reads an unhandled rejection's `message` (which may be a getter the code wrote) with no
 * limit at all; and isolated-vm counts only the isolate's own time, not the host functions it calls, so
 * code looping on a costly host function (`self.getNode` over a large graph) would run on for as long
 * as it likes. An evaluation that never waits for the host is therefore bounded in wall time too, host
 * calls included. A runaway evaluation is stopped within two looks (100 ms) past its budget.
 *
 * Evaluations run synchronously on the host's thread (an asynchronous call costs ten times the
 * evaluation), so no timer of the host could fire while one runs. The watchdog is a second, tiny
 * isolate whose one task runs on a thread of its own with the first isolate's handle: it sleeps on an
 * array shared with the host, which marks the start and end of every evaluation there, follows the
 * watched isolate's CPU time while an evaluation is under way, and disposes it once that evaluation
 * has used more than the budget.
 *
 * While its task runs, isolated-vm keeps Node's event loop alive, so the task ends after a moment
 * without evaluations (a process that forgot to dispose its sandbox still exits) and the next
 * evaluation starts it again.
 */
import type ivm from 'isolated-vm';
import { isolatedVm } from './isolated-vm.js';

/** How often the watchdog looks, in milliseconds: a runaway evaluation is stopped within two looks past its budget. */
const LOOK_EVERY_MS = 50;

/** Looks without an evaluation after which the watchdog's task ends. */
const IDLE_LOOKS = 2;

/** Memory for the watchdog's own isolate, in megabytes (isolated-vm's minimum). */
const WATCHDOG_MEMORY_MB = 8;

/**
 * Indices into the shared array. GENERATION, the number of the latest evaluation, is also counted on by
 * the guest (guest.ts) when one call runs several evaluations.
 */
export const WATCH_GENERATION = 0;
const GENERATION = WATCH_GENERATION;
const RUNNING = 1; // 1 while an evaluation is under way
const ALIVE = 2; // 1 while the watchdog's task runs (or is about to)
const STOP = 3; // 1 once the host disposes the watchdog
const FIRED = 4; // the number of the evaluation the watchdog stopped
const WALL = 5; // 1 while the evaluation under way is bounded in wall time as well
const BUDGET = 6; // the milliseconds the evaluation under way may use
const SLOTS = 7;

/** The watchdog's task: $0 the watched isolate, $1 the shared array, $2 and $3 as above. */
const WATCH = String.raw`
const target = $0, state = new Int32Array($1), lookEveryMs = $2, idleLooks = $3;
const GENERATION = ${GENERATION}, RUNNING = ${RUNNING}, ALIVE = ${ALIVE}, STOP = ${STOP}, FIRED = ${FIRED};
const WALL = ${WALL}, BUDGET = ${BUDGET};
const look = () => {
  let watched = -1, since = 0n, startedAt = 0, idle = 0;
  for (;;) {
    if (Atomics.load(state, STOP) === 1 || target.isDisposed) return;
    if (Atomics.load(state, RUNNING) === 1) {
      idle = 0;
      const generation = Atomics.load(state, GENERATION), used = target.cpuTime;
      const budgetMs = Atomics.load(state, BUDGET);
      if (generation !== watched) {
        watched = generation;
        since = used;
        startedAt = Date.now();
      } else if (used - since > BigInt(budgetMs) * 1000000n ||
        (Atomics.load(state, WALL) === 1 && Date.now() - startedAt > budgetMs)) {
        Atomics.store(state, FIRED, generation);
        target.dispose();
        return;
      }
    } else if (++idle >= idleLooks) {
      Atomics.store(state, ALIVE, 0);
      // An evaluation that started meanwhile saw the task alive, so it stays alive for it.
      if (Atomics.load(state, RUNNING) === 0 || Atomics.compareExchange(state, ALIVE, 0, 1) !== 0) return;
      idle = 0;
    }
    Atomics.wait(state, STOP, 0, lookEveryMs);
  }
};
return function watch() {
  try { look(); } catch { Atomics.store(state, ALIVE, 0); }
};`;

/** Guards one isolate; made with it, and disposed with it. */
export class Watchdog {
  readonly #state = new Int32Array(new SharedArrayBuffer(SLOTS * Int32Array.BYTES_PER_ELEMENT));
  readonly #own: ivm.Isolate;
  readonly #watch: ivm.Reference;

  /** Watches `target`; each evaluation says what it may use when it starts. */
  constructor(target: ivm.Isolate) {
    const { ExternalCopy, Isolate } = isolatedVm();
    this.#own = new Isolate({ memoryLimit: WATCHDOG_MEMORY_MB });
    const context = this.#own.createContextSync();
    const shared = new ExternalCopy(this.#state.buffer).copyInto({ release: true });
    this.#watch = context.evalClosureSync(WATCH, [target, shared, LOOK_EVERY_MS, IDLE_LOOKS], {
      result: { reference: true },
    });
  }

  /**
   * Marks the start of an evaluation that may use `budgetMs` of CPU time, and returns its number (for
   * `fired`). `wallTime`: the budget bounds its wall time as well (for evaluations that never wait on
   * the host).
   */
  start(budgetMs: number, wallTime: boolean): number {
    const generation = (Atomics.add(this.#state, GENERATION, 1) + 1) | 0;
    Atomics.store(this.#state, BUDGET, budgetMs);
    Atomics.store(this.#state, WALL, wallTime ? 1 : 0);
    Atomics.store(this.#state, RUNNING, 1);
    if (Atomics.compareExchange(this.#state, ALIVE, 0, 1) === 0) this.#watch.applyIgnored(undefined, []);
    return generation;
  }

  /**
   * The shared array's buffer, for the guest: a call that runs several evaluations counts each one on
   * from `start`'s number, so that each has a budget of its own.
   */
  get buffer(): SharedArrayBuffer {
    return this.#state.buffer as SharedArrayBuffer;
  }

  /** How many evaluations the call that `start` numbered `generation` had begun after its first. */
  evaluationsAfter(generation: number): number {
    return (Atomics.load(this.#state, GENERATION) - generation) | 0;
  }

  /** Marks the end of the evaluation under way. */
  end(): void {
    Atomics.store(this.#state, RUNNING, 0);
  }

  /** Whether the watchdog stopped evaluation number `generation` (disposing the isolate). */
  fired(generation: number): boolean {
    return Atomics.load(this.#state, FIRED) === generation;
  }

  dispose(): void {
    Atomics.store(this.#state, STOP, 1);
    Atomics.notify(this.#state, STOP);
    this.#own.dispose();
  }
}
