/**
 * Regular expressions a file supplies (a JSON Schema's `pattern`), matched where a time limit holds.
 * A backtracking pattern such as `^(a+)+$` takes time exponential in its input: in the host one match
 * holds the whole process at full CPU for as long as it likes. Here every match runs in a small isolate
 * of its own, under the sandbox's time and memory limits (the user's ceiling included), and one that
 * runs past them is an error naming the pattern.
 *
 * The calls are synchronous, as validators call `RegExp#test`; the isolate is not the code sandbox's,
 * whose evaluations may be waiting on the host when a pattern has to be tested. It is made on the first
 * match, so a schema without patterns never starts one.
 */
import type ivm from 'isolated-vm';
import { UserError } from '../errors.js';
import { isolatedVm } from './isolated-vm.js';
import {
  atCeiling,
  resolveLimits,
  SANDBOX_CEILING_VARIABLES,
  sandboxCeiling,
  type SandboxLimits,
} from './limits.js';

/** What a match sends back: the strings matched, where, and the pattern's `lastIndex` afterwards. */
interface Match {
  values: (string | undefined)[];
  index: number;
  groups?: Record<string, string | undefined>;
  lastIndex: number;
}

/**
 * The isolate's one function: compiles each pattern once (a few hundred kept) and runs one `exec` from
 * `lastIndex`. `test` asks only whether it matched, so no strings are copied back for it.
 */
const MATCHER = `(function () {
  const kept = new Map();
  return function (source, flags, text, lastIndex, test) {
    const key = flags + '/' + source;
    let pattern = kept.get(key);
    if (pattern === undefined) {
      pattern = new RegExp(source, flags);
      if (kept.size >= 256) kept.delete(kept.keys().next().value);
      kept.set(key, pattern);
    }
    pattern.lastIndex = lastIndex;
    const found = pattern.exec(text);
    if (test) return found === null ? -1 : pattern.lastIndex;
    if (found === null) return null;
    const match = { values: Array.from(found), index: found.index, lastIndex: pattern.lastIndex };
    if (found.groups !== undefined) match.groups = Object.assign({}, found.groups);
    return match;
  };
})()`;

/** RegExp as the host has it, whatever a caller of withSandboxedRegExps has put in its place. */
const HostRegExp = RegExp;

/** isolated-vm's message when its time limit stops a call. */
const TIMED_OUT = 'Script execution timed out.';

/** A pattern shown in an error: cut, so a pattern of a megabyte does not become a message of one. */
const SHOWN_PATTERN_CHARS = 80;

/** A pattern that ran past a limit. Exit code 2: the file's pattern must change. */
export class PatternError extends UserError {
  constructor(message: string, hint: string) {
    super(message, 2, hint);
  }
}

/** Matches regular expressions in an isolate under time and memory limits. Dispose it when done. */
export class PatternSandbox {
  /** The limits every match runs under. */
  readonly limits: Readonly<SandboxLimits>;
  readonly #ceiling: Readonly<SandboxLimits>;
  #isolate: { handle: ivm.Isolate; matcher: ivm.Reference } | undefined;
  #disposed = false;

  /**
   * A pattern sandbox under `limits` (the sandbox's defaults where not given), lowered to the user's
   * ceiling. Throws a UserError (exit code 2) for limits it cannot honour.
   */
  constructor(limits?: Partial<SandboxLimits>) {
    this.#ceiling = sandboxCeiling();
    this.limits = resolveLimits(limits, this.#ceiling);
  }

  /**
   * `pattern.exec(text)` from `pattern.lastIndex`, in the isolate; sets `lastIndex` as `exec` does.
   * @throws PatternError when the match runs past the time or memory limit.
   */
  exec(pattern: RegExp, text: string): RegExpExecArray | null {
    const moves = pattern.global || pattern.sticky;
    const found = this.#call(pattern, text, moves ? pattern.lastIndex : 0, false) as Match | null;
    if (moves) pattern.lastIndex = found === null ? 0 : found.lastIndex;
    if (found === null) return null;
    const match = Object.assign(found.values, { index: found.index, input: text, groups: found.groups });
    return match as RegExpExecArray;
  }

  /** `pattern.test(text)`, in the isolate. @throws PatternError as `exec` does. */
  test(pattern: RegExp, text: string): boolean {
    const moves = pattern.global || pattern.sticky;
    const after = this.#call(pattern, text, moves ? pattern.lastIndex : 0, true) as number;
    if (moves) pattern.lastIndex = Math.max(after, 0);
    return after >= 0;
  }

  /**
   * A RegExp class whose matching runs here: `exec` and `test` are this sandbox's, and every other
   * method of RegExp (and `match`, `replace`, `split` of strings) goes through `exec`. Compiling a
   * pattern, which the host still does, only parses it: the time a pattern can take is in matching.
   */
  regExpClass(): RegExpConstructor {
    const exec = (pattern: RegExp, text: string) => this.exec(pattern, text);
    const test = (pattern: RegExp, text: string) => this.test(pattern, text);
    class SandboxedRegExp extends HostRegExp {
      override exec(text: string): RegExpExecArray | null {
        return exec(this, String(text));
      }
      override test(text: string): boolean {
        return test(this, String(text));
      }
    }
    return SandboxedRegExp as unknown as RegExpConstructor;
  }

  /** Frees the isolate; matches after this throw. */
  dispose(): void {
    this.#disposed = true;
    this.#discard();
  }

  #call(pattern: RegExp, text: string, lastIndex: number, test: boolean): unknown {
    const { handle, matcher } = this.#live();
    try {
      return matcher.applySync(undefined, [pattern.source, pattern.flags, text, lastIndex, test], {
        timeout: this.limits.timeoutMs,
        result: { copy: true },
      });
    } catch (error) {
      // After a memory kill the isolate is gone; after a time-out it is fine, but it may be halfway
      // through anything, so the next match gets a new one either way.
      const killed = handle.isDisposed;
      this.#discard();
      if (killed)
        throw this.#limitError(pattern, text, 'memoryMb', `used more than ${this.limits.memoryMb} MB`);
      if (error instanceof Error && error.message === TIMED_OUT)
        throw this.#limitError(pattern, text, 'timeoutMs', `took longer than ${this.limits.timeoutMs} ms`);
      throw error;
    }
  }

  #live(): { handle: ivm.Isolate; matcher: ivm.Reference } {
    if (this.#disposed) throw new Error('the pattern sandbox was disposed');
    if (this.#isolate && !this.#isolate.handle.isDisposed) return this.#isolate;
    const handle = new (isolatedVm().Isolate)({ memoryLimit: this.limits.memoryMb });
    const context = handle.createContextSync();
    const matcher = context.evalSync(MATCHER, { reference: true }) as ivm.Reference;
    this.#isolate = { handle, matcher };
    return this.#isolate;
  }

  #discard(): void {
    const isolate = this.#isolate;
    this.#isolate = undefined;
    if (isolate && !isolate.handle.isDisposed) isolate.handle.dispose();
  }

  #limitError(pattern: RegExp, text: string, key: keyof SandboxLimits, what: string): PatternError {
    const source =
      pattern.source.length > SHOWN_PATTERN_CHARS
        ? `${pattern.source.slice(0, SHOWN_PATTERN_CHARS)}…`
        : pattern.source;
    const raise = atCeiling(key, this.limits, this.#ceiling)
      ? `${SANDBOX_CEILING_VARIABLES[key]} (the cap on config.sandbox.${key})`
      : `config.sandbox.${key}`;
    return new PatternError(
      `pattern ${JSON.stringify(source)} ${what} matching a text of ${text.length} characters (config.sandbox.${key})`,
      `rewrite the pattern so it cannot backtrack without end (nested repetition such as (a+)+ or (a|a)* does), or raise ${raise}`,
    );
  }
}

/**
 * Runs `build` with the global `RegExp` replaced by `patterns`' class, so that the regular expressions
 * a library makes while it runs (zod makes a JSON Schema's `pattern`s with `new RegExp`, some inside
 * closures no caller can reach) match in the sandbox later. `build` must be synchronous: the global is
 * restored as soon as it returns.
 */
export function withSandboxedRegExps<T>(patterns: PatternSandbox, build: () => T): T {
  globalThis.RegExp = patterns.regExpClass();
  try {
    return build();
  } finally {
    globalThis.RegExp = HostRegExp;
  }
}
