/**
 * A store part that keeps each save as JSON text, in order, for tests that check what a goal run or a
 * flow pass saved and when. It loads nothing: such a test hands the run its state itself.
 */
import type { GoalRunStore } from '../../src/autonomous/goal-run-store.js';
import type { FlowRunStore } from '../../src/flow/flow-run-store.js';

export function recordingStore(saves: string[]): GoalRunStore & FlowRunStore {
  const refuse = () => Promise.reject(new Error('a recording store keeps saves only'));
  return {
    create: refuse,
    load: refuse,
    save: async (_key: string, state: unknown) => {
      saves.push(JSON.stringify(state));
    },
  };
}
