import { useEffect, useState, useSyncExternalStore } from 'react';
import type { EventBus } from '../events.js';
import type { GraphView } from '../graph/view.js';
import type { RunState } from './run-state.js';
import { createRunStore, type RunStoreOptions } from './run-store.js';

/** The run state and the one thing the UI itself reports into it. */
export interface RunStateHandle {
  state: RunState;
  /** Call after handing the user's text to `onSubmit`; disables the input until the agent answers. */
  submitted: () => void;
}

/**
 * Folds the events of `bus` into a {@link RunState}. The store subscribes while the first render runs
 * (not in an effect) because callers emit events right after mounting, before effects have run.
 */
export function useRunState(
  bus: EventBus,
  graph: GraphView | undefined,
  options: RunStoreOptions = {},
): RunStateHandle {
  const [store] = useState(() => createRunStore(bus, graph, options));
  useEffect(() => store.dispose, [store]);
  const state = useSyncExternalStore(store.subscribe, store.getState);
  return { state, submitted: store.submitted };
}
