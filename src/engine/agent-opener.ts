/**
 * How a layer below the opener (src/agent) gets an agent of its own, the designer's and a sub-agent's
 * alike: it is handed an AgentOpener, so every agent of a run is opened one way and gets what any agent
 * gets (the goal loop, flows and memory, under the run's permissions) without that layer importing them.
 */
import type { EventBus } from '../events.js';
import type { GraphView } from '../graph/view.js';
import type { ModelSet } from '../llm/types.js';
import type { HostNamespace, Interpreter } from './interpreter.js';

export interface AgentSpec {
  graph: GraphView;
  /** Namespaces this agent is lent besides what every agent gets (the designer's `meta` helpers). */
  host?: Record<string, HostNamespace>;
  /** Models of its own (the designer counts its round trips); default: the run's. */
  models?: ModelSet;
  /** Self-referential mode; default: the graph's config. */
  selfReferential?: boolean;
  /** A bus of its own, for an agent whose steps must not reach the run's listeners (its model calls still do). */
  events?: EventBus;
}

/** Opens an interpreter for `spec`; the caller disposes it. */
export type AgentOpener = (spec: AgentSpec) => Promise<Interpreter>;
