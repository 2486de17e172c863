/**
 * Self-referential mode: switched on by the graph config (`"selfReferential": true`) or the command line
 * (`--self-referential`). It lends code nodes the `self` API (self-api.ts), puts every edit on the event
 * stream the moment it applies, and keeps the edited graph in the conversation state, so a conversation
 * resumed in another process runs on the nodes the agent wrote.
 */
import { lintGraph } from '../aipl/lint.js';
import type { AgentEvent, EventBus } from '../events.js';
import type { EditRecord } from '../graph/edit.js';
import type { GraphFile } from '../graph/schema.js';
import { VersionedGraph } from '../graph/versioned.js';
import { StaticGraph, type GraphView } from '../graph/view.js';
import { SandboxError, type HostFunction } from '../sandbox/index.js';
import { MCP_NAMESPACE } from './actions.js';
import { EditBudget, selfApi, type SelfCaller } from './self-api.js';
import type { ConversationState, Turn } from './state.js';

/** The sandbox namespace the API is lent under. */
export const SELF_NAMESPACE = 'self';

/** How to switch the mode on, named in errors of code that uses `self` without it. */
const SELF_MODE_HINT =
  'switch on self-referential mode: "selfReferential": true in the graph config, or --self-referential';

/** What the mode is switched on for. */
export interface SelfModeOptions {
  /** The graph the run edits (see editableGraph). */
  graph: VersionedGraph;
  events: EventBus;
  /** The run whose code is calling `self`; undefined when none is. */
  caller: () => SelfCaller | undefined;
}

/**
 * Self-referential mode switched on for one interpreter: the `self` API, which the interpreter lends its
 * code nodes under SELF_NAMESPACE, and the graph's edits on its events.
 */
export class SelfMode {
  readonly graph: VersionedGraph;
  /** The functions of `self`. */
  readonly api: Record<string, HostFunction>;
  readonly #budget: EditBudget;
  readonly #stopEvents: () => void;

  /** Starts reporting edits. Stop with dispose. */
  constructor({ graph, events, caller }: SelfModeOptions) {
    this.graph = graph;
    this.#budget = new EditBudget(graph.config.selfEditLimits.editsPerTurn);
    this.api = selfApi(graph, this.#budget, caller);
    this.#stopEvents = graph.onEdit((record) => events.emit(editEvent(record, graph)));
  }

  /** A turn (a reply, or a call from the host) starts: its edits are counted afresh. */
  beginTurn(): void {
    this.#budget.reset();
  }

  /** Stores the graph, with its history, in `state`: what a resumed conversation runs on. */
  save(state: ConversationState): void {
    state.graph = this.graph.toJSON();
  }

  /** Stops reporting edits. */
  dispose(): void {
    this.#stopEvents();
  }
}

/**
 * The graph a conversation runs on: the nodes saved in its state when the agent edited it (that graph,
 * not the file, holds the nodes the agent wrote) under the file's config (the agent never edits config,
 * and the file's is the one the command line overrode), else the file, versioned when the mode is on so
 * it can be edited. `source` names the state in errors.
 */
export function conversationGraph(
  file: GraphFile,
  saved: ConversationState | undefined,
  options: { selfReferential?: boolean; source?: string } = {},
): GraphView {
  if (saved?.graph !== undefined)
    return VersionedGraph.fromJSON(
      saved.graph,
      `${options.source ?? 'the saved conversation'} (graph)`,
      // It stays in the mode, so its edits keep being saved.
      { ...file.config, selfReferential: true },
      lintGraph,
    );
  if (options.selfReferential ?? file.config.selfReferential) return new VersionedGraph(file, lintGraph);
  return new StaticGraph(file);
}

/**
 * The graph a self-referential run edits: a versioned graph as it is, a static one as a versioned copy
 * of its file (whoever holds the static graph does not see the edits).
 */
export function editableGraph(graph: GraphView): VersionedGraph {
  if (graph instanceof VersionedGraph) return graph;
  if (graph instanceof StaticGraph) return new VersionedGraph(graph.file, lintGraph);
  throw new TypeError('self-referential mode edits a VersionedGraph or a StaticGraph; this graph is neither');
}

/** The `self` caller for a run standing in `state`, with the nodes its edits must leave in place. */
export function callerOf(state: ConversationState, protect: readonly string[]): SelfCaller {
  let last: Turn | undefined;
  for (let i = state.stack.length - 1; i >= 0 && !last; i--)
    last = state.stack[i]!.turns.findLast((turn) => turn.kind === 'chat');
  return {
    node: state.current ?? '(host)',
    protect,
    lastReply: last ? { node: last.node, text: last.output } : null,
  };
}

/** The `graph.edited` event for an applied edit: the nodes it touched, by their names before and after. */
function editEvent(record: EditRecord, graph: VersionedGraph): AgentEvent {
  const names = [record.before?.name, record.after?.name].filter((n): n is string => n !== undefined);
  return {
    type: 'graph.edited',
    version: record.version,
    by: record.by,
    op: record.op,
    nodes: [...new Set(names)],
    totalNodes: graph.nodes().length,
  };
}

/** Namespaces that exist only when something is switched on, and how to switch it on. */
const LENT_WHEN: Record<string, { when: string; hint: string }> = {
  [SELF_NAMESPACE]: { when: 'only in self-referential mode', hint: SELF_MODE_HINT },
  [MCP_NAMESPACE]: {
    when: 'only when MCP servers are configured',
    hint: 'pass --mcp-config FILE (an mcpServers file), or keep one as mcp.json in your configuration folder',
  },
};

/**
 * Code that used `self` outside the mode, or `mcp` with no servers, fails with `self is not defined`;
 * this says what to switch on in that error. Any other error is returned as it is. `lent`: what the run
 * lends, whose names are defined.
 */
export function explainMissingNamespace(error: unknown, lent: (name: string) => boolean): unknown {
  if (!(error instanceof SandboxError) || error.kind !== 'runtime') return error;
  const name = /\b(\w+) is not defined\b/.exec(error.detail)?.[1];
  const missing = name === undefined || lent(name) ? undefined : LENT_WHEN[name];
  if (!missing) return error;
  return new SandboxError(
    'runtime',
    error.node,
    `${error.detail}: \`${name}\` exists ${missing.when}`,
    missing.hint,
    error.line,
  );
}
