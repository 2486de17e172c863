/** The goal-run view (`meta-agent run` in a terminal); the CLI imports this module lazily. */
export { renderGoalUI, type GoalUI, type GoalUIOptions } from './render.js';
export { GoalLayout, type GoalLayoutProps } from './GoalLayout.js';
export {
  createGoalStore,
  type GoalScreen,
  type GoalStore,
  type GoalStoreOptions,
  type ShownRequest,
} from './goal-store.js';
export {
  initialGoalView,
  reduceGoalView,
  type CurrentStep,
  type GoalEnd,
  type GoalItem,
  type GoalView,
  type StepOutcome,
} from './view-state.js';
