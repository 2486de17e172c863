/**
 * Code nodes run in isolated-vm, which needs a process started with `--no-node-snapshot`
 * (sandbox/isolated-vm.ts). The flag costs every process some 35 ms of start-up, so bin/meta-agent.js
 * starts without it, and a command that is about to run code restarts itself with it before it has
 * loaded, read or written anything: `design`, `doctor`, `mcp`, `run`, `serve` and `worker` always, `chat`, `call` and `simulate`
 * when their graph may run code.
 */
import { readFile } from 'node:fs/promises';
import { isCallAction, parseTransition } from '../graph/parse.js';
import { startedWithoutNodeSnapshot } from '../sandbox/isolated-vm.js';
import { ENV_FILE_VARIABLE } from './env-file.js';
import { leaveCtrlCToChild } from './interrupt.js';

/** Runs this command again in a process that can run the sandbox, unless this one can. */
export async function restartForSandbox(): Promise<void> {
  if (startedWithoutNodeSnapshot()) return;
  const args = [...process.execArgv, '--no-node-snapshot', ...process.argv.slice(1)];
  // This process has set the variables of the .env file: reading it again would only repeat its warnings.
  const env = { ...process.env, [ENV_FILE_VARIABLE]: 'off' };
  // The same process, pid, terminal and signals, with the flag: nothing is left to forward.
  if (process.platform !== 'win32' && process.execve)
    process.execve(process.execPath, [process.execPath, ...args], env);
  // Windows has no exec: a child runs the command on the same console.
  leaveCtrlCToChild();
  const { spawnSync } = await import('node:child_process');
  const child = spawnSync(process.execPath, args, { stdio: 'inherit', env });
  process.exit(child.status ?? 1);
}

/** Node actions that may run code in the sandbox besides calls. */
const RUN_CODE = new Set(['code', 'goal_loop', 'flow']);

/** Commands that run code whatever they are given. */
const ALWAYS_RUN_CODE = new Set(['design', 'doctor', 'mcp', 'run', 'serve', 'worker']);

/** Commands that run code when their graph file, their first argument, has some. */
const RUN_GRAPHS = new Set(['call', 'chat', 'simulate']);

/**
 * The same decision as the commands make, taken from the command line before the program loads (which
 * a restart would load again), where the command line is plain: the command, then its graph file. The
 * commands decide again once their arguments are parsed, which covers every other form (options
 * first, `chat --state`).
 */
export async function restartEarly(argv: readonly string[]): Promise<void> {
  const [command, graph] = argv.slice(2);
  const later = (arg: string) => arg === '-h' || arg === '--help' || arg.startsWith('--state');
  if (command === undefined || argv.slice(3).some(later)) return;
  if (ALWAYS_RUN_CODE.has(command)) await restartForSandbox();
  else if (RUN_GRAPHS.has(command) && graph !== undefined && !graph.startsWith('-'))
    await restartIfGraphRunsCode(graph);
}

/**
 * Restarts for the sandbox when the graph file at `path` may run code, or when `statePath` holds a
 * conversation that carries its own graph (a self-referential run's, which is the one run then).
 */
export async function restartIfGraphRunsCode(path: string, statePath?: string): Promise<void> {
  if (startedWithoutNodeSnapshot()) return;
  if ((await fileMayRunCode(path)) || (statePath !== undefined && (await carriesGraph(statePath))))
    await restartForSandbox();
}

/**
 * Restarts for the sandbox when the flow file at `path` has an after-query step: its code runs there,
 * and so do the patterns of its schema (sandbox/patterns.ts).
 */
export async function restartIfFlowRunsCode(path: string): Promise<void> {
  if (!startedWithoutNodeSnapshot() && (await flowHasCode(path))) await restartForSandbox();
}

/** Unreadable or not JSON counts as no code: the command says what is wrong without a restart. */
async function flowHasCode(path: string): Promise<boolean> {
  try {
    const nodes = (JSON.parse(await readFile(path, 'utf8')) as { nodes?: unknown }).nodes;
    return (
      Array.isArray(nodes) &&
      nodes.some(
        (node: { afterQuery?: { code?: unknown; schema?: unknown } } | null) =>
          node?.afterQuery?.code !== undefined || node?.afterQuery?.schema !== undefined,
      )
    );
  } catch {
    return false;
  }
}

/**
 * False only for a JSON graph file whose nodes plainly run no code. Anything else (a spreadsheet, a
 * file that cannot be read or parsed) counts as code: a wrong yes costs a restart, a wrong no the run.
 */
async function fileMayRunCode(path: string): Promise<boolean> {
  if (!path.toLowerCase().endsWith('.json')) return true;
  try {
    return graphMayRunCode(JSON.parse(await readFile(path, 'utf8')));
  } catch {
    return true;
  }
}

/**
 * Whether running a graph (as its file holds it, not yet validated) may evaluate JavaScript: a code
 * node, a function node (its arguments are expressions), a boolean condition or a `return EXPR`.
 */
export function graphMayRunCode(graph: unknown): boolean {
  const nodes = (graph as { nodes?: unknown } | null)?.nodes;
  if (!Array.isArray(nodes)) return true;
  return nodes.some((node: unknown) => {
    if (node === null || typeof node !== 'object') return true;
    const { action, booleanCondition, transitions = [] } = node as Record<string, unknown>;
    // A goal_loop node's run evaluates code (execute_javascript, sub-agents); a flow's after-query steps may.
    if (typeof action !== 'string' || RUN_CODE.has(action) || isCallAction(action)) return true;
    if (booleanCondition !== undefined || !Array.isArray(transitions)) return true;
    return transitions.some((text: unknown) => {
      if (typeof text !== 'string') return true;
      const target = parseTransition(text);
      return target.kind === 'return' && target.expression !== undefined;
    });
  });
}

/**
 * Whether the conversation saved at `path` may carry its own graph: a `"graph"` key anywhere in it (the
 * file is a journal of JSON values, and any of them may set the state's graph; quotes inside strings
 * are escaped, so only a key matches). False when there is no such file.
 */
async function carriesGraph(path: string): Promise<boolean> {
  try {
    return /"graph"\s*:/.test(await readFile(path, 'utf8'));
  } catch {
    return false;
  }
}
