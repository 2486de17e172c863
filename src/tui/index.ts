/** The terminal UI: entry points for the CLI, and the pieces for anything that embeds them. */
export {
  renderChatUI,
  renderDesignUI,
  type ChatUIOptions,
  type DesignUIOptions,
  type TerminalStreams,
} from './render.js';
export { App, type AppProps } from './App.js';
export { useRunState, type RunStateHandle } from './use-run-state.js';
export { createRunStore, type RunStore, type RunStoreOptions } from './run-store.js';
export type { Decision, ReplyInProgress, RunState, TranscriptEntry, TurnEdits } from './run-state.js';
export type { DesignStage, StageStatus } from './stages.js';
export type { EditHistory, VersionRecord } from './version-diff.js';
export { colorTheme, monoTheme, themeFromEnv, type Theme } from './theme.js';
export type { TerminalSize } from './layout-size.js';
