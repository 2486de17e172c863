/**
 * What the terminal shows about a run, as a pure fold over the event stream. The hook in
 * `use-run-state.ts` feeds it; keeping it pure lets tests and the `--json` consumers reason about the
 * same transitions without rendering anything.
 */
import type { AgentEvent, TransitionKind } from '../events.js';
import type { ModelRole } from '../llm/types.js';
import { foldAiplPhase, type AiplView } from './aipl-view.js';
import { appendBounded, type DesignStage, reduceStage } from './stages.js';

/** One step of reasoning behind a reply, folded under it in the transcript. */
export type Decision =
  | {
      kind: 'transition';
      from: string;
      to: string;
      via: TransitionKind;
      question?: string;
      choices?: string[];
      answer?: string;
    }
  | { kind: 'thought'; node: string; text: string }
  | { kind: 'variable'; node: string; name: string; value: string }
  /** A line a code node printed. */
  | { kind: 'log'; node: string; text: string };

/** A finished line of the conversation; once in the transcript it never changes. */
export type TranscriptEntry =
  | { id: number; kind: 'user'; text: string }
  | { id: number; kind: 'agent'; node: string; text: string; decisions: Decision[] }
  | { id: number; kind: 'error'; message: string; node?: string };

/**
 * What the graph edits of the current turn (since the user last spoke) did, by node. A code node often
 * makes several edits at once (add a node, then link to it), so the view marks the turn's edits
 * together rather than only the very last one.
 */
export interface TurnEdits {
  /** First and last version made this turn. */
  from: number;
  version: number;
  /** Who made the edits, in order. */
  by: string[];
  /** Nodes that are new this turn. */
  added: string[];
  /** Nodes that existed before the turn and were edited. */
  changed: string[];
  /** Nodes that existed before the turn and are gone. */
  removed: string[];
  /** Node names when the turn's first edit came. */
  before: ReadonlySet<string>;
  /** Every node an edit of the turn named. */
  touched: string[];
  /** The user has spoken since: the next edit starts a new turn's set. */
  closed: boolean;
}

/** The reply being worked on: its decisions so far and the text streamed for it. */
export interface ReplyInProgress {
  decisions: Decision[];
  streamed: string;
  /** Set while a thought node runs; its streamed text becomes a thought decision. */
  thinking?: { node: string; text: string };
}

export interface RunState {
  graphName: string;
  current?: string;
  visited: ReadonlySet<string>;
  /** Node names as of the last edit, to tell added nodes from changed ones and find removed ones. */
  known: ReadonlySet<string>;
  /** The edits of the current turn, or the last turn that made any. */
  lastEdit?: TurnEdits;
  version: number;
  nodeCount: number;
  /** Entries in order; an entry's id is its index. */
  transcript: TranscriptEntry[];
  turn: ReplyInProgress;
  /** The agent is between a user message (or the run start) and its reply. */
  working: boolean;
  /** The user submitted text and no event has answered it yet. */
  submitted: boolean;
  /** A `quit` transition ended the conversation. */
  ended: boolean;
  /** The error the last run stopped at: the agent will not answer, so the reply line stays closed. */
  failure?: string;
  tokens: { prompt: number; completion: number };
  /** Estimated cost in US dollars of the calls whose model has a known price. */
  cost: number;
  modelCalls: number;
  /** Calls whose model has no known price (local, scripted or unlisted models). */
  unpricedCalls: number;
  model?: string;
  scripted: boolean;
  stages: DesignStage[];
  errorCount: number;
  /** The conversation's AIPL state, when its graph uses AIPL (config.aipl) or it was saved with one. */
  aipl?: AiplView;
  /** A run has started; `startedAt` is then the time of its first start, else of the first render. */
  started: boolean;
  startedAt: number;
}

/** What the reducer consumes: an event with the facts the hook observed when it arrived. */
export type RunAction =
  | {
      type: 'event';
      event: AgentEvent;
      at: number;
      /** The graph's node names right after a `graph.edited`. */
      names?: readonly string[];
    }
  | { type: 'submitted' };

/** The graph facts the initial state needs. */
export interface GraphSnapshot {
  name: string;
  version: number;
  names: readonly string[];
}

const STREAM_LIMIT = 8_000;

/** The state before any event: nothing visited, nothing streamed. */
export function initialRunState(graph: GraphSnapshot, at: number): RunState {
  return {
    graphName: graph.name,
    visited: new Set(),
    known: new Set(graph.names),
    version: graph.version,
    nodeCount: graph.names.length,
    transcript: [],
    turn: { decisions: [], streamed: '' },
    working: false,
    submitted: false,
    ended: false,
    tokens: { prompt: 0, completion: 0 },
    cost: 0,
    modelCalls: 0,
    unpricedCalls: 0,
    scripted: false,
    stages: [],
    errorCount: 0,
    started: false,
    startedAt: at,
  };
}

/** Folds one action into the state. Returns the same object when nothing visible changed. */
export function reduceRunState(state: RunState, action: RunAction): RunState {
  if (action.type === 'submitted') return { ...state, submitted: true };
  const { event } = action;
  switch (event.type) {
    case 'run.started':
      // A conversation starts once (a function call from the host is a run of its own); the clock counts
      // from the first start.
      return {
        ...state,
        graphName: event.graph,
        nodeCount: event.nodes,
        version: event.version,
        ...(state.started ? {} : { started: true, startedAt: action.at }),
        working: true,
        failure: undefined,
      };
    case 'node.entered':
      return {
        ...state,
        current: event.node,
        visited: state.visited.has(event.node) ? state.visited : new Set(state.visited).add(event.node),
        working: true,
        turn: enterNode(settleThought(state.turn), event.node, event.action),
      };
    case 'model.call':
      return {
        ...state,
        tokens: {
          prompt: state.tokens.prompt + event.usage.promptTokens,
          completion: state.tokens.completion + event.usage.completionTokens,
        },
        cost: state.cost + (event.costUsd ?? 0),
        modelCalls: state.modelCalls + 1,
        unpricedCalls: state.unpricedCalls + (event.costUsd === undefined ? 1 : 0),
        // The chatbot's model names the run; other roles only fill in until it has answered.
        model: event.role === 'chatbot' || state.model === undefined ? event.model : state.model,
        scripted: state.scripted || event.scripted,
      };
    case 'model.delta':
      return streamDelta(state, event.delta, event.role);
    case 'transition': {
      const ended = event.kind === 'quit';
      return {
        ...state,
        turn: withDecision(state.turn, {
          kind: 'transition',
          from: event.from,
          to: event.to,
          via: event.kind,
          ...(event.question !== undefined ? { question: event.question } : {}),
          ...(event.choices !== undefined ? { choices: event.choices } : {}),
          ...(event.answer !== undefined ? { answer: event.answer } : {}),
        }),
        ended: state.ended || ended,
        working: ended ? false : state.working,
      };
    }
    case 'variable.set':
      // A thought stored with `x = …` is set right after it streams: the thought comes first.
      return {
        ...state,
        turn: withDecision(state.turn, {
          kind: 'variable',
          node: event.node,
          name: event.name,
          value: showValue(event.value),
        }),
      };
    case 'code.log':
      return {
        ...state,
        turn: withDecision(state.turn, { kind: 'log', node: event.node, text: event.text }),
      };
    case 'reply': {
      const turn = settleThought(state.turn);
      const entry: TranscriptEntry = {
        id: state.transcript.length,
        kind: 'agent',
        node: event.node,
        text: event.text,
        decisions: turn.decisions,
      };
      return {
        ...state,
        transcript: [...state.transcript, entry],
        turn: { decisions: [], streamed: '' },
        working: false,
        submitted: false,
      };
    }
    case 'user':
      return {
        ...state,
        ...(state.lastEdit ? { lastEdit: { ...state.lastEdit, closed: true } } : {}),
        transcript: [...state.transcript, { id: state.transcript.length, kind: 'user', text: event.text }],
        working: true,
        submitted: false,
      };
    case 'graph.edited':
      return applyEdit(state, event, action.names);
    case 'design.stage':
      return { ...state, stages: reduceStage(state.stages, event) };
    case 'aipl.phase':
      return { ...state, aipl: foldAiplPhase(state.aipl, event) };
    case 'error': {
      const entry: TranscriptEntry = {
        id: state.transcript.length,
        kind: 'error',
        message: event.message,
        ...(event.node !== undefined ? { node: event.node } : {}),
      };
      return {
        ...state,
        transcript: [...state.transcript, entry],
        errorCount: state.errorCount + 1,
        working: false,
        submitted: false,
        // The interpreter reports an error as its run fails (engine/interpreter.ts, #guarded).
        failure: event.message,
      };
    }
    default:
      // The goal loop's events belong to its own view (goal-state.ts).
      return state;
  }
}

/** A thought node streams its thought; any other node streams what will become the reply. */
function enterNode(turn: ReplyInProgress, node: string, action: string): ReplyInProgress {
  if (action.startsWith('thought')) return { ...turn, thinking: { node, text: '' } };
  return turn;
}

/** Turns a finished thought into a decision, so it stays folded under the reply it led to. */
function settleThought(turn: ReplyInProgress): ReplyInProgress {
  if (!turn.thinking) return turn;
  const { thinking, ...rest } = turn;
  if (!thinking.text.trim()) return rest;
  return { ...rest, decisions: [...rest.decisions, { kind: 'thought', ...thinking }] };
}

/** Adds a decision after the thought in progress, which is settled first. */
function withDecision(turn: ReplyInProgress, decision: Decision): ReplyInProgress {
  const settled = settleThought(turn);
  return { ...settled, decisions: [...settled.decisions, decision] };
}

/**
 * During a design stage the stream belongs to the stage started last. Otherwise the chatbot's stream
 * is the thought or the reply in progress; other roles (the simulated user) do not speak for the agent.
 */
function streamDelta(state: RunState, delta: string, role: ModelRole): RunState {
  const running = state.stages.findLastIndex((s) => s.status === 'running' || s.status === 'retry');
  if (running >= 0) {
    const stages = state.stages.slice();
    const stage = stages[running]!;
    stages[running] = { ...stage, text: appendBounded(stage.text, delta, STREAM_LIMIT) };
    return { ...state, stages };
  }
  if (role !== 'chatbot') return state;
  const { turn } = state;
  if (turn.thinking) {
    const text = appendBounded(turn.thinking.text, delta, STREAM_LIMIT);
    return { ...state, turn: { ...turn, thinking: { ...turn.thinking, text } } };
  }
  return { ...state, turn: { ...turn, streamed: appendBounded(turn.streamed, delta, STREAM_LIMIT) } };
}

/**
 * Folds an edit into the turn's set. Membership in the names before the turn and after this edit
 * decides added, changed and removed: the event's `op` names one operation, but a rename or a revert
 * touches nodes in more than one way.
 */
function applyEdit(
  state: RunState,
  event: Extract<AgentEvent, { type: 'graph.edited' }>,
  names: readonly string[] | undefined,
): RunState {
  const now = new Set(names ?? guessNames(state.known, event));
  const open = state.lastEdit && !state.lastEdit.closed ? state.lastEdit : undefined;
  const before = open?.before ?? state.known;
  const touched = [...new Set([...(open?.touched ?? []), ...event.nodes])];
  const lastEdit: TurnEdits = {
    from: open?.from ?? event.version,
    version: event.version,
    by: open?.by.includes(event.by) ? open.by : [...(open?.by ?? []), event.by],
    added: touched.filter((n) => now.has(n) && !before.has(n)),
    changed: touched.filter((n) => now.has(n) && before.has(n)),
    removed: [...before].filter((n) => !now.has(n)),
    before,
    touched,
    closed: false,
  };
  return { ...state, known: now, version: event.version, nodeCount: event.totalNodes, lastEdit };
}

/** Without the graph's names, the event alone says what changed: a removal drops, anything else adds. */
function guessNames(
  known: ReadonlySet<string>,
  event: Extract<AgentEvent, { type: 'graph.edited' }>,
): string[] {
  if (event.op === 'remove') return [...known].filter((n) => !event.nodes.includes(n));
  return [...known, ...event.nodes];
}

/** Variables may hold anything; the transcript shows one short line of JSON. */
function showValue(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}
