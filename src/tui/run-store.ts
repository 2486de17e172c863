/**
 * Holds the run state outside React and subscribes to the bus as soon as it is created, so no event
 * emitted between mounting the UI and React's first effect is lost.
 */
import type { ConversationState } from '../engine/state.js';
import type { AgentEvent, EventBus } from '../events.js';
import type { GraphView } from '../graph/view.js';
import { emptyAiplView } from './aipl-view.js';
import { resumedRun } from './resume.js';
import { initialRunState, reduceRunState, type RunAction, type RunState } from './run-state.js';

export interface RunStoreOptions {
  /** The clock for elapsed time; tests pass a fixed one. */
  now?: () => number;
  /** A conversation saved earlier that this run goes on with: its transcript and current node show at once. */
  resumed?: ConversationState;
}

/** A tiny external store in the shape `useSyncExternalStore` expects. */
export interface RunStore {
  getState(): RunState;
  subscribe(listener: () => void): () => void;
  /** Records that the user submitted a reply, so the input stays disabled until the agent answers. */
  submitted(): void;
  /** Stops listening to the bus. */
  dispose(): void;
}

/**
 * Creates a store that folds every event of `bus` into a {@link RunState}. `graph` is the graph the
 * events are about; a design run has none until the designer has produced it.
 */
export function createRunStore(
  bus: EventBus,
  graph: GraphView | undefined,
  options: RunStoreOptions = {},
): RunStore {
  const now = options.now ?? Date.now;
  const names = (): string[] => graph?.nodes().map((n) => n.name) ?? [];
  let state: RunState = {
    ...initialRunState({ name: graph?.name ?? '', version: graph?.version ?? 0, names: names() }, now()),
    // A new conversation on an AIPL graph has an empty AIPL state (engine/state.ts, newState).
    ...(graph?.config.aipl ? { aipl: emptyAiplView() } : {}),
    ...(options.resumed ? resumedRun(options.resumed) : {}),
  };
  const listeners = new Set<() => void>();
  const dispatch = (action: RunAction): void => {
    const next = reduceRunState(state, action);
    if (next === state) return;
    state = next;
    for (const listener of listeners) listener();
  };
  const toAction = (event: AgentEvent): RunAction => {
    // The graph is edited before the event is emitted, so its names are already the new ones.
    if (event.type === 'graph.edited') return { type: 'event', event, at: now(), names: names() };
    return { type: 'event', event, at: now() };
  };
  const unsubscribe = bus.on((event) => dispatch(toAction(event)));
  return {
    getState: () => state,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    submitted: () => dispatch({ type: 'submitted' }),
    dispose: unsubscribe,
  };
}
