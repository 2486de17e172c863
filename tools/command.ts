/**
 * What a goal-loop command is: a name, a description, a zod schema for its arguments and an
 * implementation, declared once (as AutoGPT forge's `@command`). The prompt's command list, the native
 * tool-call schema and argument validation are all derived from that one declaration (registry.ts).
 * A command names the resources it needs and is offered only when the run has them.
 */
import type { z } from 'zod';
import type { FileTouch } from '../src/events.js';

/**
 * What running a command may change, which decides how it is authorized and whether it may run again
 * after a crash: `none` and `read`/`compute`/`network` repeat harmlessly; `write`, `delete`, `execute`
 * (a program that may change anything in the workspace) and `agent` are side effects that never run
 * twice. `delete` and `execute` are asked for every time unless an allow rule names the command.
 */
export type Effect = 'none' | 'read' | 'compute' | 'network' | 'write' | 'delete' | 'execute' | 'agent';

/** Effects a resumed run must not repeat when it cannot tell whether they happened. */
export const SIDE_EFFECTS: ReadonlySet<Effect> = new Set(['write', 'delete', 'execute', 'agent']);

/** The run's file jail: every path is relative to its root, and none leaves it (workspace.ts). */
export interface WorkspaceFiles {
  /** The absolute, real path of the root. */
  readonly root: string;
  read(file: string): Promise<string>;
  /** The bytes of a file, text or not, refused past `maxBytes`. */
  readBytes(file: string, maxBytes: number): Promise<Uint8Array>;
  /** Replaces (or creates) the file atomically, creating its folders. */
  write(file: string, data: string | Uint8Array): Promise<void>;
  append(file: string, text: string): Promise<void>;
  remove(file: string): Promise<void>;
  /** Files under `directory` (recursively), as paths relative to the root, sorted. */
  list(directory: string): Promise<string[]>;
}

/** JavaScript run in the sandbox with nothing of the host: no environment, files or network. */
export interface CodeRunner {
  evaluate(code: string): Promise<{ value: unknown; logs: string[] }>;
}

/** What a workspace Python program did (python-files.ts). */
export interface PythonFileRun {
  /** How it ended: its exit status, or why it has none (stopped at the time limit, the runtime failed). */
  ended: { status: number; memory: boolean } | { timedOut: true } | { failed: string };
  /** stdout and stderr as printed, a traceback included; cut in the middle when long. */
  output: string;
  /** The workspace files it wrote and deleted, through the jail. */
  written: string[];
  deleted: string[];
  /** Its changes the jail or the caps refused, and workspace files not copied in for it, with why. */
  refused: Array<{ path: string; reason: string }>;
  notCopiedIn: Array<{ path: string; reason: string }>;
}

/** Python programs of the workspace run in the Python sandbox, on a copy of the workspace. */
export interface PythonFiles {
  /** How long a program may run, and the memory it may add to the runtime's. */
  readonly timeoutMs: number;
  readonly memoryMb: number;
  run(file: string): Promise<PythonFileRun>;
}

/** The limits a command line runs under. */
export interface ShellLimits {
  /** The command is killed after this long. */
  timeoutMs: number;
  /** The most bytes of each stream (stdout, stderr) kept: its first and its last half; the rest is cut. */
  outputBytes: number;
}

/** What a command line did. */
export interface ShellOutcome {
  /** Its exit status; null when a signal ended it. */
  exitCode: number | null;
  /** What it wrote, within the cap (a line says what was cut). */
  stdout: string;
  stderr: string;
  /** True when it ran past its time limit and was killed. */
  timedOut?: boolean;
}

/** Command lines run in the workspace, contained as the user chose (shell-sandbox.ts). */
export interface ShellRunner {
  readonly limits: ShellLimits;
  run(commandLine: string, signal: AbortSignal): Promise<ShellOutcome>;
}

/** A repository cloned into the workspace. */
export interface ClonedRepository {
  /** Where, relative to the workspace. */
  path: string;
  /** The bytes it takes on disk. */
  bytes: number;
}

/** Clones public repositories into the workspace under the run's network policy (git-clone.ts). */
export interface RepositoryCloner {
  clone(repositoryUrl: string, clonePath: string, signal: AbortSignal): Promise<ClonedRepository>;
}

/** A web page fetched under the run's browsing policy (allow list, private addresses, size cap). */
export interface WebPage {
  /** Where the page was in the end, after redirects. */
  url: string;
  status: number;
  /** The page as readable text. */
  text: string;
  /** True when the page was cut at the byte cap. */
  truncated: boolean;
}

export interface WebAccess {
  fetchPage(url: string, signal: AbortSignal): Promise<WebPage>;
}

/** One web search result, as AutoGPT's `google` lists it. */
export interface SearchHit {
  title: string;
  href: string;
  body: string;
}

/** Web search through the provider the user configured (web-search.ts). */
export interface WebSearch {
  /** The provider, as the prompt and `doctor` name it (`SearXNG at http://localhost:8888`). */
  readonly provider: string;
  search(query: string, signal: AbortSignal): Promise<SearchHit[]>;
}

/**
 * Images and transcription through the run's OpenAI-compatible server (src/llm/media.ts); each
 * failure is an Error whose one-line message is for the model.
 */
export interface MediaEndpoints {
  generateImage(prompt: string, signal: AbortSignal): Promise<{ bytes: Uint8Array; extension: string }>;
  transcribe(audio: Uint8Array, fileName: string, signal: AbortSignal): Promise<string>;
}

/** Asks the run's chatbot one question (a browse summary, a sub-task); the call is metered like any other. */
export type AskModel = (prompt: string, purpose: string, signal: AbortSignal) => Promise<string>;

/** Long-term memory as the goal loop uses it; the store itself is memory/'s. */
export interface LongTermMemory {
  add(text: string, meta?: Record<string, string>): Promise<string>;
  search(query: string, k: number): Promise<Array<{ text: string; score: number }>>;
}

/** An autogram a run started as a sub-agent. */
export interface SubAgentInfo {
  key: string;
  name: string;
  task: string;
  /** The graph file it runs, relative to the workspace. */
  graph: string;
}

/** The sub-agents of a run: autograms from graph files, or designed on the spot. */
export interface SubAgents {
  start(
    name: string,
    task: string,
    prompt: string,
    signal: AbortSignal,
  ): Promise<{ key: string; reply: string }>;
  message(key: string, message: string, signal: AbortSignal): Promise<string>;
  list(): SubAgentInfo[];
  remove(key: string): boolean;
  /** Calls the callable node `fn` of the graph file `graph` with `args`; returns its value. */
  call(graph: string, fn: string, args: unknown[], signal: AbortSignal): Promise<unknown>;
  /** The agents and their conversations as plain JSON, saved with the run so a resumed run has them. */
  snapshot(): unknown;
}

/** Everything a command may need; a run offers a command only when it has every resource it names. */
export interface CommandResources {
  workspace: WorkspaceFiles;
  code: CodeRunner;
  web: WebAccess;
  search: WebSearch;
  media: MediaEndpoints;
  ask: AskModel;
  memory: LongTermMemory;
  agents: SubAgents;
  git: RepositoryCloner;
  /** Only when the user turned execute_shell on for the run. */
  shell: ShellRunner;
  python: PythonFiles;
}

export type ResourceName = keyof CommandResources;

/** What a command returns: text for the model (untrusted where it comes from outside), and what it did. */
export interface CommandResult {
  output: string;
  /** Workspace files touched, for the view and the run's record. */
  files?: FileTouch[];
  /** Set by task_complete: the run ends, with this reason from the model. */
  complete?: string;
}

/** The run's resources, the ones a command needs guaranteed, and the signal that cancels it. */
export type CommandContext<N extends ResourceName = ResourceName> = Pick<CommandResources, N> & {
  signal: AbortSignal;
};

/** A command as the registry holds it: its arguments are checked before `run` sees them. */
export interface Command {
  readonly name: string;
  /** A short title, as the seed's list shows it ("Write to file"). */
  readonly title: string;
  /** One or two sentences for the model: what it does, what it returns, what it refuses. */
  readonly description: string;
  readonly args: z.ZodObject;
  /**
   * The arguments' JSON Schema as the model is offered it, when the command brings its own (an MCP
   * tool's); otherwise it is derived from `args`.
   */
  readonly parameters?: Record<string, unknown>;
  readonly effect: Effect;
  readonly needs: readonly ResourceName[];
  /** Runs the command; `args` must have passed `args.parse` (the loop checks them first). */
  run(
    args: Record<string, unknown>,
    context: Partial<CommandResources> & { signal: AbortSignal },
  ): Promise<CommandResult>;
}

/** The declaration of one command; `run` gets its arguments typed by the schema and its resources. */
export interface CommandSpec<S extends z.ZodObject, N extends ResourceName> {
  name: string;
  title: string;
  description: string;
  args: S;
  effect: Effect;
  needs: readonly N[];
  run(args: z.infer<S>, context: CommandContext<N>): Promise<CommandResult | string>;
}

/** Declares a command (one file each in tools/). */
export function defineCommand<S extends z.ZodObject, N extends ResourceName = never>(
  spec: CommandSpec<S, N>,
): Command {
  return {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    args: spec.args,
    effect: spec.effect,
    needs: spec.needs,
    async run(args, context) {
      for (const need of spec.needs)
        if (context[need] === undefined) throw new Error(`${spec.name} needs ${need}, which this run lacks`);
      const result = await spec.run(args as z.infer<S>, context as CommandContext<N>);
      return typeof result === 'string' ? { output: result } : result;
    },
  };
}
