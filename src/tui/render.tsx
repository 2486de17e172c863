/**
 * Entry points for the CLI: mount the chat or design view on a terminal. Mount them only when stdout
 * and stdin are TTYs; otherwise use the `--json` event stream.
 */
import { render, type Instance } from 'ink';
import { App } from './App.js';
import type { ChatLayoutProps } from './layouts/ChatLayout.js';
import type { DesignLayoutProps } from './layouts/DesignLayout.js';
import { renderOptions, type TerminalStreams } from './render-options.js';

export type { TerminalStreams };

/** Options of {@link renderChatUI}. */
export type ChatUIOptions = ChatLayoutProps & TerminalStreams;

/** Options of {@link renderDesignUI}. */
export type DesignUIOptions = DesignLayoutProps & TerminalStreams;

/**
 * Mounts the chat view. `onSubmit` gets each reply the user types; on `q` or Ctrl+C the view unmounts
 * and then calls `onQuit` (`waitUntilExit()` on the returned instance resolves as well).
 */
export function renderChatUI(options: ChatUIOptions): Instance {
  const { stdout, stdin, patchConsole, ...props } = options;
  return render(<App mode="chat" {...props} />, renderOptions({ stdout, stdin, patchConsole }));
}

/** Mounts the design view: stages, streamed model text, the designer graph when given. */
export function renderDesignUI(options: DesignUIOptions): Instance {
  const { stdout, stdin, patchConsole, ...props } = options;
  return render(<App mode="design" {...props} />, renderOptions({ stdout, stdin, patchConsole }));
}
