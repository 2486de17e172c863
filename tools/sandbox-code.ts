/**
 * The goal loop's `execute_javascript` runner: the model's JavaScript in our isolated-vm Sandbox, under
 * the limits code nodes have, with no namespace of the host lent to it.
 *
 * The sandbox's `runCode` copies every top-level variable back out, and a function or a Date cannot
 * leave the isolate; model code declares helpers at the top level all the time. So the code runs as
 * a direct `eval` inside a function: its declarations stay in that function, and `eval` still hands
 * back the completion value of its last statement.
 */
import { Script } from 'node:vm';
import { Sandbox, SandboxError, type SandboxLimits } from '../src/sandbox/index.js';
import { CODE_FILENAME, WRAPPED_LINE_OFFSET } from '../src/sandbox/wrap.js';
import type { CodeRunner } from './command.js';

/** Runs the code held by `__code` (the only variable passed in) and gives back its completion value. */
const RUNNER = '(function () { return eval(__code); })()';

/** Names errors in messages; the sandbox's errors name a graph node, which this code is not. */
const WHERE = { node: 'execute_javascript' };

/** Where a syntax error's stack names the line (`code.js:3`, then the line and a caret). */
const SYNTAX_ERROR_LINE = new RegExp(`^${CODE_FILENAME.replace('.', '\\.')}:(\\d+)`);

/** Console output an error message repeats, at most (its end: what came just before the error). */
const MAX_ERROR_LOG_CHARS = 2_000;

/** JavaScript evaluated in the sandbox, one isolate for the runner's life, each evaluation starting fresh. */
export class SandboxCodeRunner implements CodeRunner {
  readonly #sandbox: Sandbox;

  private constructor(sandbox: Sandbox) {
    this.#sandbox = sandbox;
  }

  /** A runner under `limits` (those of code nodes, DEFAULT_SANDBOX_LIMITS, where not given). */
  static async create(limits?: Partial<SandboxLimits>): Promise<SandboxCodeRunner> {
    return new SandboxCodeRunner(await Sandbox.create(limits));
  }

  /**
   * The completion value of the code's last statement and what it printed with `console`.
   * @throws Error for code that does not parse, throws, or runs past the time or memory limit, or
   * whose value is not plain data; its message is for the model (no stack, no host path).
   */
  async evaluate(code: string): Promise<{ value: unknown; logs: string[] }> {
    const problem = syntaxProblem(code);
    if (problem !== undefined) throw new Error(`execute_javascript: ${problem}`);
    // The blank lines put the code's first line where the sandbox counts line 1 of its own texts, and
    // the file name is the one it reads lines from, so errors name the line of the model's code.
    const source = `${'\n'.repeat(WRAPPED_LINE_OFFSET)}${code}\n//# sourceURL=${CODE_FILENAME}`;
    try {
      const { value, logs } = await this.#sandbox.runCode(RUNNER, { __code: source }, WHERE);
      return { value, logs };
    } catch (error) {
      throw error instanceof SandboxError ? forModel(error, this.#sandbox.limits) : error;
    }
  }

  /** Frees the isolate; evaluations after this throw. */
  dispose(): void {
    this.#sandbox.dispose();
  }
}

/**
 * Why the code does not parse, with its line, or undefined when it does. Compiling runs nothing, and
 * V8 parses a script as it parses `eval` code; inside the sandbox a parse error only says it is one,
 * not where.
 */
function syntaxProblem(code: string): string | undefined {
  try {
    new Script(code, { filename: CODE_FILENAME });
    return undefined;
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    const line = SYNTAX_ERROR_LINE.exec(error.stack ?? '')?.[1];
    return `SyntaxError: ${error.message}${line === undefined ? '' : ` (line ${line})`}`;
  }
}

/** The sandbox's error told to the model: what happened and what to change, without the node. */
function forModel(error: SandboxError, limits: Readonly<SandboxLimits>): Error {
  const at = error.line === undefined ? '' : ` (line ${error.line})`;
  switch (error.kind) {
    case 'timeout':
      return new Error(
        `execute_javascript: the code ran longer than ${limits.timeoutMs} ms and was stopped; ` +
          'look for a loop that never ends, or do less in one call',
      );
    case 'memory':
      return new Error(
        `execute_javascript: the code used more than ${limits.memoryMb} MB of memory and was stopped; ` +
          'keep less data at once',
      );
    case 'uncopyable':
      return new Error(
        `execute_javascript: ${error.detail}; end with plain data (numbers, strings, booleans, null, ` +
          'arrays, plain objects), e.g. JSON.stringify(value) or String(value)',
      );
    default:
      return new Error(`execute_javascript: ${error.detail}${at}${printed(error.logs)}`);
  }
}

/** The end of what the code printed before it failed, as a paragraph of the error message. */
function printed(logs: readonly string[]): string {
  if (logs.length === 0) return '';
  const text = logs.join('\n');
  const shown =
    text.length > MAX_ERROR_LOG_CHARS ? `[…]${text.slice(text.length - MAX_ERROR_LOG_CHARS)}` : text;
  return `\nConsole output before the error:\n${shown}`;
}
