import { useSyncExternalStore } from 'react';
import type { GoalScreen, GoalStore } from './goal-store.js';

/** The goal view's state, re-rendering on every change the store reports. */
export function useGoalScreen(store: GoalStore): GoalScreen {
  return useSyncExternalStore(store.subscribe, store.getState);
}
