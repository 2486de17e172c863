/**
 * The sub-agents of a goal-loop run: autograms opened as every agent is (src/agent lends the opener),
 * each from a graph file in the workspace or from a graph the designer makes for the task on the spot.
 * A sub-agent keeps its conversation between messages; the whole set serializes (`snapshot`) so a
 * resumed run can message the same agents again. Graph files are read and designed graphs written
 * through the workspace, so its jail applies to every path the model names.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import type { AgentOpener } from '../src/engine/agent-opener.js';
import type { Interpreter } from '../src/engine/interpreter.js';
import { conversationGraph } from '../src/engine/self-mode.js';
import { parseState, saveState, type ConversationState } from '../src/engine/state.js';
import { schemaRefFor } from '../src/graph/json-schema.js';
import { lintGraph } from '../src/aipl/lint.js';
import { graphFormatOf, graphNameFromPath, parseGraphJson, parseGraphObject } from '../src/graph/load.js';
import type { GraphFile } from '../src/graph/schema.js';
import { StaticGraph } from '../src/graph/view.js';
import { untilAborted } from '../src/interrupt.js';
import type { SubAgentInfo, SubAgents, WorkspaceFiles } from './command.js';

/**
 * Sub-agents one run may start, counting deleted ones and starts that failed after their graph was
 * loaded or designed: each may have cost a design.
 */
export const MAX_SUB_AGENTS = 20;

/** Characters of a reply (or a returned value) the goal loop's model is shown. */
export const MAX_REPLY_CHARS = 8000;

const SNAPSHOT_FORMAT = 'meta-agent/sub-agents@1';

/** The sub-agents of a run as plain JSON, for the run's saved state. */
export interface SubAgentsSnapshot {
  format: typeof SNAPSHOT_FORMAT;
  /** Agents started so far: the next key is `agent-(counter + 1)`. */
  counter: number;
  /**
   * Each agent with the graph it was started with (the file may have changed since; the conversation
   * goes on with the graph it began on) and its conversation (saveState's JSON).
   */
  agents: Array<SubAgentInfo & { file: GraphFile; state: ConversationState }>;
}

/** Designs a graph for a task (meta/design.ts, lent by the opener): the graph, or why it failed. */
export type AgentDesigner = (request: {
  description: string;
  name: string;
  outDir: string;
  signal: AbortSignal;
}) => Promise<{ ok: true; graph: GraphFile } | { ok: false; stage: string; reason: string; hint?: string }>;

/** How the sub-agents of a run in the workspace at the given folder are opened and designed. */
export type SubAgentsLent = (workspace: string) => { open: AgentOpener; design?: AgentDesigner };

export interface AutogramAgentsOptions {
  workspace: WorkspaceFiles;
  /** Opens each sub-agent as every agent of the run is opened, on its models and events. */
  open: AgentOpener;
  /** Designs an agent when no graph file is named; without it a graph file must be named. */
  design?: AgentDesigner;
}

interface Agent extends SubAgentInfo {
  file: GraphFile;
  interpreter: Interpreter;
  state: ConversationState | undefined;
  /**
   * Settles when the agent's last reply has. An interrupted reply runs on unobserved in the
   * interpreter, so the next one waits for it rather than share the sandbox and the state.
   */
  idle: Promise<unknown>;
}

const snapshotSchema = z.object({
  format: z.literal(SNAPSHOT_FORMAT),
  counter: z.number().int().nonnegative(),
  agents: z.array(
    z.object({
      key: z.string().regex(/^agent-\d+$/),
      name: z.string(),
      task: z.string(),
      graph: z.string(),
      file: z.unknown(),
      state: z.unknown(),
    }),
  ),
});

/** The sub-agents of one run. Dispose it when the run ends. */
export class AutogramAgents implements SubAgents {
  readonly #workspace: WorkspaceFiles;
  readonly #open: AgentOpener;
  readonly #designer: AgentDesigner | undefined;
  readonly #agents = new Map<string, Agent>();
  #counter = 0;

  constructor(options: AutogramAgentsOptions) {
    this.#workspace = options.workspace;
    this.#open = options.open;
    this.#designer = options.design;
  }

  /** The agents of `snapshot` (what `snapshot()` returned, read back from JSON), ready for messages. */
  static async restore(snapshot: unknown, options: AutogramAgentsOptions): Promise<AutogramAgents> {
    const parsed = snapshotSchema.safeParse(snapshot);
    if (!parsed.success)
      throw new Error(`not a sub-agents snapshot (${SNAPSHOT_FORMAT}): ${parsed.error.issues[0]?.message}`);
    const agents = new AutogramAgents(options);
    try {
      for (const saved of parsed.data.agents) {
        const source = `sub-agent ${saved.key}'s graph`;
        const file = checkedGraph(parseGraphObject(saved.file, source).file, source);
        const state = parseState(saved.state, `sub-agent ${saved.key}'s conversation`);
        const { key, name, task, graph } = saved;
        const interpreter = await agents.#interpreter(file, state);
        agents.#agents.set(key, {
          key,
          name,
          task,
          graph,
          file,
          interpreter,
          state,
          idle: Promise.resolve(),
        });
      }
    } catch (error) {
      agents.dispose();
      throw error;
    }
    const numbers = parsed.data.agents.map((a) => Number(a.key.slice('agent-'.length)));
    agents.#counter = Math.max(parsed.data.counter, ...numbers);
    return agents;
  }

  /**
   * Starts an agent on the graph file `task` (or `name`) names, or on one designed for `task` and saved
   * as `<name>.autogram.json`; returns its key and what it said: its opening line, if it spoke first,
   * and its reply to `prompt`.
   */
  async start(
    name: string,
    task: string,
    prompt: string,
    signal: AbortSignal,
  ): Promise<{ key: string; reply: string }> {
    signal.throwIfAborted();
    if (this.#counter >= MAX_SUB_AGENTS)
      throw new Error(
        `this run has started ${MAX_SUB_AGENTS} sub-agents, the most one run may (deleting one does not free its place); message the ones it has`,
      );
    const named = graphPathIn(task) ?? graphPathIn(name);
    const { graph, file } =
      named === undefined
        ? await this.#design(name, task, signal)
        : { graph: named, file: await readGraph(this.#workspace, named) };
    // Taken now, so starts that overlap get keys of their own; a start that fails still counts.
    const key = `agent-${++this.#counter}`;
    const interpreter = await this.#interpreter(file);
    const agent: Agent = {
      key,
      name,
      task,
      graph,
      file,
      interpreter,
      state: undefined,
      idle: Promise.resolve(),
    };
    try {
      const opening = await this.#reply(agent, undefined, signal);
      const reply = agent.state?.ended
        ? opening
        : joinReplies(opening, await this.#reply(agent, prompt, signal));
      this.#agents.set(key, agent);
      return { key, reply };
    } catch (error) {
      interpreter.dispose();
      // A design is costly: say where it is, so a retry can start on it instead of designing again.
      if (named === undefined && !signal.aborted)
        throw new Error(`${(error as Error).message} (the designed graph is saved as ${graph})`, {
          cause: error,
        });
      throw error;
    }
  }

  /** The agent's reply to `message`. */
  async message(key: string, message: string, signal: AbortSignal): Promise<string> {
    signal.throwIfAborted();
    const agent = this.#agent(key);
    if (agent.state?.ended)
      throw new Error(
        `${key} (${agent.name}) has ended its conversation and takes no more messages; delete it, or start a new agent`,
      );
    return this.#reply(agent, message, signal);
  }

  list(): SubAgentInfo[] {
    return [...this.#agents.values()].map(({ key, name, task, graph }) => ({ key, name, task, graph }));
  }

  /** Ends the agent `key` and forgets it; false when there is none. */
  remove(key: string): boolean {
    const agent = this.#agents.get(key);
    agent?.interpreter.dispose();
    return this.#agents.delete(key);
  }

  /** Calls the callable node `fn` of the graph file `graph` (read now) with `args`; returns its value. */
  async call(graph: string, fn: string, args: unknown[], signal: AbortSignal): Promise<unknown> {
    signal.throwIfAborted();
    const file = await readGraph(this.#workspace, graph);
    const name = fn.replace(/\(.*$/s, '').trim();
    const callable = new StaticGraph(file).nodes().filter((node) => node.callable);
    if (!callable.some((node) => node.callable!.fn === name))
      throw new Error(
        `${graph} has no callable node ${name}(…); ${
          callable.length > 0
            ? `its callable nodes: ${callable.map((node) => node.name).join(', ')}`
            : 'it has none (a callable node is named like f(a, b))'
        }`,
      );
    const interpreter = await this.#interpreter(file);
    try {
      return (await untilAborted(interpreter.applyFn(name, args), signal)).value;
    } finally {
      interpreter.dispose();
    }
  }

  /** The agents and their conversations as plain JSON; `restore` brings them back. */
  snapshot(): SubAgentsSnapshot {
    const agents = [...this.#agents.values()].map(({ key, name, task, graph, file, state }) => ({
      key,
      name,
      task,
      graph,
      file,
      // An agent is kept only once it has replied, so it has a state.
      state: JSON.parse(saveState(state!)) as ConversationState,
    }));
    return { format: SNAPSHOT_FORMAT, counter: this.#counter, agents };
  }

  /** Releases every agent's interpreter. */
  dispose(): void {
    for (const agent of this.#agents.values()) agent.interpreter.dispose();
    this.#agents.clear();
  }

  #agent(key: string): Agent {
    const agent = this.#agents.get(key);
    if (agent) return agent;
    const keys = [...this.#agents.keys()];
    throw new Error(
      `no sub-agent "${key}"; ${keys.length > 0 ? `the sub-agents are ${keys.join(', ')}` : 'none is running (start one with start_agent)'}`,
    );
  }

  /** An interpreter on `file`, or on the graph a self-editing agent saved in its state. */
  #interpreter(file: GraphFile, state?: ConversationState): Promise<Interpreter> {
    return this.#open({ graph: conversationGraph(file, state) });
  }

  /** The agent's next reply, as the model is shown it; the agent's state moves on unless interrupted. */
  async #reply(agent: Agent, text: string | undefined, signal: AbortSignal): Promise<string> {
    const work = agent.idle.then(async () => {
      const result = await agent.interpreter.reply(text, agent.state);
      // A reply the caller never saw stays out of the conversation.
      if (!signal.aborted) agent.state = result.state;
      return result;
    });
    agent.idle = work.catch(() => undefined);
    const { reply, state, ended } = await untilAborted(work, signal);
    if (ended) return `[${agent.key} ended its conversation: it takes no more messages]`;
    const lastWords = agent.interpreter.saidLastWords(state)
      ? `\n[${agent.key} has said its last words: the next message ends its conversation]`
      : '';
    return capped(reply, 'reply') + lastWords;
  }

  /** Designs an agent for `task` and saves it into the workspace under a free `<slug of name>` name. */
  async #design(
    name: string,
    task: string,
    signal: AbortSignal,
  ): Promise<{ graph: string; file: GraphFile }> {
    if (!this.#designer)
      throw new Error(
        'no graph file was named (task or name must be a path ending in .autogram.json, .json or .csv), and this run may not design new agents',
      );
    if (task.trim() === '')
      throw new Error('the task is empty: say what the agent is for, or name a graph file');
    const graphName = await this.#freeName(slugOf(name));
    // The designer writes its files and views into a folder; only the graph goes into the workspace.
    const outDir = await mkdtemp(join(tmpdir(), 'meta-agent-sub-agent-'));
    try {
      const outcome = await this.#designer({ description: task, name: graphName, outDir, signal });
      signal.throwIfAborted();
      if (!outcome.ok)
        throw new Error(
          `designing an agent for "${task}" failed at the ${outcome.stage} stage: ${outcome.reason}${outcome.hint ? ` (${outcome.hint})` : ''}`,
        );
      const graph = `${graphName}.autogram.json`;
      await this.#workspace.write(graph, graphText(outcome.graph, join(this.#workspace.root, graph)));
      return { graph, file: outcome.graph };
    } finally {
      await rm(outDir, { recursive: true, force: true });
    }
  }

  /** `base`, or the first of `base_2`, `base_3`, … with no graph file in the workspace yet. */
  async #freeName(base: string): Promise<string> {
    for (let n = 1; ; n++) {
      const candidate = n === 1 ? base : `${base}_${n}`;
      const taken = await this.#workspace.read(`${candidate}.autogram.json`).then(
        () => true,
        () => false,
      );
      if (!taken) return candidate;
    }
  }
}

/** `text` cut to MAX_REPLY_CHARS, with a note saying so. */
export function capped(text: string, what: string): string {
  if (text.length <= MAX_REPLY_CHARS) return text;
  return `${text.slice(0, MAX_REPLY_CHARS)}\n[… the ${what} was ${text.length} characters; the first ${MAX_REPLY_CHARS} are shown]`;
}

/** `text` as a graph file path when it is one (a single word ending in a graph file extension). */
function graphPathIn(text: string): string | undefined {
  const path = text.trim();
  return /^\S+\.(json|csv)$/i.test(path) ? path : undefined;
}

/** Reads, parses and lints the graph file `path` through the workspace (whose jail applies). */
async function readGraph(workspace: WorkspaceFiles, path: string): Promise<GraphFile> {
  const format = graphFormatOf(path);
  let text: string;
  try {
    text = await workspace.read(path);
  } catch (error) {
    throw new Error(`cannot read the graph file ${path}: ${(error as Error).message}`, { cause: error });
  }
  // The CSV parser loads only for spreadsheets, as in the graph loader.
  const { file } =
    format === 'csv'
      ? (await import('../src/graph/csv.js')).graphFromCsv(text, {
          name: graphNameFromPath(path),
          source: path,
        })
      : parseGraphJson(text, path);
  return checkedGraph(file, path);
}

/** `file`, unless the linter finds errors in it: then an Error naming the first. */
function checkedGraph(file: GraphFile, source: string): GraphFile {
  const errors = lintGraph(file).filter((finding) => finding.severity === 'error');
  const first = errors[0];
  if (first)
    throw new Error(
      `${source}: the graph has ${errors.length} error(s), the first: ${first.node ?? '(graph)'}: ${first.message}`,
    );
  return file;
}

/** A graph file's text, as the graph loader writes one at `absolutePath`. */
function graphText(file: GraphFile, absolutePath: string): string {
  const { $schema: _previous, ...rest } = file;
  return `${JSON.stringify({ $schema: schemaRefFor(absolutePath), ...rest }, null, 2)}\n`;
}

/** `quiz_master` from "Quiz Master!": a graph and file name; `agent` when nothing is left. */
function slugOf(name: string): string {
  const slug = name
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '_')
    .replace(/^_+|_+$/g, '');
  return [...slug].slice(0, 40).join('').replace(/_+$/, '') || 'agent';
}

/** The opening line (when the agent spoke first) and the reply to the prompt, told apart. */
function joinReplies(opening: string, reply: string): string {
  return opening === '' ? reply : `[opening] ${opening}\n[reply to your prompt] ${reply}`;
}
