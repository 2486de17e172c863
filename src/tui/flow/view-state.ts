/**
 * What the flow view shows, as a pure fold over a pass's events (`reduceFlowView`): the pass's nodes in
 * order, each with where it stands and, while it runs, the tail of the answer streaming in (or the
 * progress its MCP tool reports); the step;
 * the temporary changes; the tokens; the end. A finished pass becomes a report, printed once above the
 * live part of the view. All text that came from a model or a flow file is made safe here, as it enters.
 */
import type { AgentEvent, FlowNodeStatus } from '../../events.js';
import type { FlowRunState } from '../../flow/run-state.js';
import { untrusted } from '../goal/shown-text.js';
import { oneLine } from '../text.js';

/** Most characters of a running node's answer kept for display: its tail. */
export const LIVE_CHARS = 2000;
/**
 * Most characters of a running node's raw answer kept. More than LIVE_CHARS, so that an escape sequence
 * split across deltas is stripped whole, and a cut through one at the start falls outside what is shown.
 */
const RAW_CHARS = 3000;
const NAME_CHARS = 200;
const DETAIL_CHARS = 1000;

/** Where a node stands: `pending` until its first status arrives. */
export type ShownNodeStatus = 'pending' | FlowNodeStatus;

/** One node of the pass. */
export interface FlowNodeView {
  /** The name as the events give it, which they are matched by: not for display (use `name`). */
  key: string;
  /** The name, safe to draw. */
  name: string;
  status: ShownNodeStatus;
  /** Added for this pass by an after-query step. */
  temporary: boolean;
  /** Settled in an earlier session of a resumed pass: no event of this session tells of it. */
  earlier: boolean;
  /** The answer being asked for (1 for the first); for a done node, the answers it took. */
  attempt?: number;
  /** Why it was retried, failed or blocked; that a fallback was used. */
  detail?: string;
  /** Tokens its calls used in this pass; for a reused node, what its last run used (saved now). */
  tokens?: number;
  /** The model that answered it (done), or was asked (failed). */
  model?: string;
  /** Database keys its after-query step wrote. */
  wrote: string[];
  /** What its prompt went through, safe to draw: trimmed to the context, references read as None. */
  notes: string[];
  /** The tail of the answer streaming in, safe to draw; empty when none. */
  live: string;
  /** The raw tail `live` is made from: model output, never drawn. */
  streamed: string;
}

/** A temporary change an after-query step asked for. */
export interface FlowChangeView {
  by: string;
  change: string;
  applied: boolean;
  reason?: string;
}

/** How the pass ended, from `flow.ended`. */
export type FlowEnd = Omit<Extract<AgentEvent, { type: 'flow.ended' }>, 'type'>;

/** A finished pass, printed once: its header, every node, every change and the end. */
export interface FlowReport {
  /** Its index in `reports`. */
  id: number;
  flow: string;
  pass: number;
  concurrency?: number;
  resumed: boolean;
  nodes: FlowNodeView[];
  changes: FlowChangeView[];
  end: FlowEnd;
}

export interface FlowView {
  /** The flow's name (safe). */
  flow: string;
  /** `flow.started` came: the pass's nodes are known. */
  started: boolean;
  pass?: number;
  concurrency?: number;
  resumed: boolean;
  /** Answers a node may be asked for, when the caller knows (the flow's `attempts`). */
  attempts?: number;
  /** Every node of the pass, in the flow's order; temporary ones join at the end as they are added. */
  nodes: FlowNodeView[];
  /** The step running or last run. */
  step?: number;
  changes: FlowChangeView[];
  /** Tokens of the pass so far: its model calls (and, resumed, its earlier steps'); the end's figure after. */
  tokens: number;
  ended?: FlowEnd;
  /** Finished passes, in order; append-only. */
  reports: FlowReport[];
}

/** What the view knows before any event. */
export interface FlowViewStart {
  /** The flow's name, shown until `flow.started` gives it. */
  flow?: string;
  /** The flow's `attempts`: a retry shows as `attempt n/N`. */
  attempts?: number;
  /** The run as saved: a pass in progress shows the nodes its earlier steps settled. */
  state?: FlowRunState;
}

/** The view before any event. */
export function initialFlowView(start: FlowViewStart = {}): FlowView {
  const view: FlowView = {
    flow: safeName(start.flow ?? start.state?.flow ?? ''),
    started: false,
    resumed: false,
    nodes: [],
    changes: [],
    tokens: 0,
    reports: [],
    ...(start.attempts !== undefined && { attempts: start.attempts }),
  };
  const current = start.state?.current;
  if (!current) return view;
  const temporary = new Set(current.changes.flatMap((c) => (c.op === 'add-node' ? [c.node.name] : [])));
  const nodes = Object.entries(current.results).map(([key, result]): FlowNodeView => {
    const tokens = result.status === 'reused' ? result.savedTokens : result.tokens;
    return {
      ...newNode(key, temporary.has(key)),
      status: result.status,
      earlier: true,
      ...(result.attempts > 0 && { attempt: result.attempts }),
      ...(result.detail !== undefined && { detail: untrusted(result.detail, DETAIL_CHARS) }),
      ...(tokens !== undefined && { tokens }),
      ...(result.model !== undefined && { model: untrusted(result.model, DETAIL_CHARS) }),
    };
  });
  // Temporary nodes not settled yet: flow.started lists them, and they keep their mark.
  for (const key of temporary) if (!Object.hasOwn(current.results, key)) nodes.push(newNode(key, true));
  const tokens = Object.values(current.results).reduce((sum, result) => sum + result.tokens, 0);
  return { ...view, pass: current.pass, resumed: true, nodes, tokens, step: current.steps };
}

/** Folds one event into the view. Returns the same object for events the view does not show. */
export function reduceFlowView(view: FlowView, event: AgentEvent): FlowView {
  switch (event.type) {
    case 'flow.started': {
      // A new pass starts afresh; a resumed one keeps what its saved state said of its earlier steps.
      const fresh: FlowView = {
        ...initialFlowView(),
        reports: view.reports,
        ...(view.attempts !== undefined && { attempts: view.attempts }),
      };
      const base = event.resumed && !view.ended ? view : fresh;
      const known = new Map(base.nodes.map((node) => [node.key, node]));
      return {
        ...base,
        flow: safeName(event.flow),
        started: true,
        pass: event.pass,
        concurrency: event.concurrency,
        resumed: event.resumed,
        nodes: event.nodes.map((key) => known.get(key) ?? newNode(key, false)),
      };
    }
    case 'flow.step':
      return { ...view, step: event.step };
    case 'flow.node':
      return withNode(view, event.node, (node) => {
        const { detail: _detail, ...rest } = node;
        const detail = event.detail !== undefined ? { detail: untrusted(event.detail, DETAIL_CHARS) } : {};
        return {
          ...rest,
          status: event.status,
          ...(event.attempt !== undefined && { attempt: event.attempt }),
          ...(event.tokens !== undefined && { tokens: event.tokens }),
          ...(event.model !== undefined && { model: untrusted(event.model, DETAIL_CHARS) }),
          ...detail,
          // A new answer starts with nothing shown; a settled node shows none.
          live: '',
          streamed: '',
        };
      });
    case 'flow.delta': {
      const node = view.nodes.find((n) => n.key === event.node);
      if (!node || (node.status !== 'running' && node.status !== 'retry')) return view;
      return withNode(view, event.node, (n) => {
        const streamed = (n.streamed + event.delta).slice(-RAW_CHARS);
        return { ...n, streamed, live: untrusted(streamed, Infinity).slice(-LIVE_CHARS) };
      });
    }
    case 'flow.progress': {
      // A tool node's server tells how far its call has got: shown where an answer would stream.
      const node = view.nodes.find((n) => n.key === event.node);
      if (node?.status !== 'running') return view;
      const count = event.total === undefined ? `${event.progress}` : `${event.progress}/${event.total}`;
      const said = `${count}${event.message === undefined ? '' : ` ${event.message}`}`;
      return withNode(view, event.node, (n) => ({ ...n, live: untrusted(said, DETAIL_CHARS) }));
    }
    case 'flow.changed': {
      const change: FlowChangeView = {
        by: safeName(event.by),
        change: untrusted(event.change, DETAIL_CHARS),
        applied: event.applied,
        ...(event.reason !== undefined && { reason: untrusted(event.reason, DETAIL_CHARS) }),
      };
      const changed = { ...view, changes: [...view.changes, change] };
      const added = event.applied ? /^add node (.+)$/s.exec(event.change)?.[1] : undefined;
      if (added === undefined) return changed;
      return withNode(changed, added, (node) => ({ ...node, temporary: true }));
    }
    case 'flow.database':
      return withNode(view, event.by, (node) => {
        const keys = event.keys.map(safeName);
        return { ...node, wrote: [...node.wrote.filter((key) => !keys.includes(key)), ...keys] };
      });
    case 'flow.trimmed':
      return withNode(view, event.node, (node) => ({
        ...node,
        notes: [
          ...node.notes,
          `prompt trimmed to the ${event.contextTokens}-token context (${event.from} → ${event.to} tokens)`,
        ],
      }));
    case 'flow.unset': {
      const references = untrusted(event.references.join(', '), DETAIL_CHARS);
      return withNode(view, event.node, (node) => ({
        ...node,
        notes: [...node.notes, `read as None: ${references}`],
      }));
    }
    case 'model.call':
      if (!view.started || view.ended) return view;
      return { ...view, tokens: view.tokens + event.usage.promptTokens + event.usage.completionTokens };
    case 'flow.ended': {
      const { type: _type, ...end } = event;
      // Every node settles before a pass ends: one still pending was settled by an earlier session.
      const nodes = view.nodes.map((node) =>
        node.status === 'pending' && view.resumed ? { ...node, earlier: true } : node,
      );
      const report: FlowReport = {
        id: view.reports.length,
        flow: view.flow,
        pass: event.pass,
        ...(view.concurrency !== undefined && { concurrency: view.concurrency }),
        resumed: view.resumed,
        nodes,
        changes: view.changes,
        end,
      };
      return { ...view, nodes, tokens: event.tokens, ended: end, reports: [...view.reports, report] };
    }
    default:
      return view;
  }
}

/** A name or key, safe to draw on one line. */
function safeName(text: string): string {
  // untrusted() may add a note of the characters cut: room for it, then nothing more is cut.
  return oneLine(untrusted(text, NAME_CHARS), NAME_CHARS + 40);
}

function newNode(key: string, temporary: boolean): FlowNodeView {
  return {
    key,
    name: safeName(key),
    status: 'pending',
    temporary,
    earlier: false,
    wrote: [],
    notes: [],
    live: '',
    streamed: '',
  };
}

/** The view with node `key` changed by `change`; a node the view has not seen joins at the end. */
function withNode(view: FlowView, key: string, change: (node: FlowNodeView) => FlowNodeView): FlowView {
  const index = view.nodes.findIndex((node) => node.key === key);
  if (index === -1) return { ...view, nodes: [...view.nodes, change(newNode(key, false))] };
  const nodes = [...view.nodes];
  nodes[index] = change(nodes[index]!);
  return { ...view, nodes };
}
