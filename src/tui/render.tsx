/**
 * Entry points for the CLI: mount the chat or design view on a terminal. Mount them only when stdout
 * and stdin are TTYs; otherwise use the `--json` event stream.
 */
import { render, type Instance } from 'ink';
import { App } from './App.js';
import type { ChatLayoutProps } from './layouts/ChatLayout.js';
import type { DesignLayoutProps } from './layouts/DesignLayout.js';

/** Streams to draw on and read from, for embedding; the process's own by default. */
export interface TerminalStreams {
  stdout?: NodeJS.WriteStream;
  stdin?: NodeJS.ReadStream;
  /** Print `console.*` output above the view instead of through it (default true). */
  patchConsole?: boolean;
}

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

function renderOptions(streams: TerminalStreams) {
  return {
    ...(streams.stdout ? { stdout: streams.stdout } : {}),
    ...(streams.stdin ? { stdin: streams.stdin } : {}),
    ...(streams.patchConsole !== undefined ? { patchConsole: streams.patchConsole } : {}),
    // Ctrl+C goes to the view's quit key, so the caller's onQuit can save before the process ends.
    exitOnCtrlC: false,
    // The CLI mounts the view only on a terminal, so draw it there even when CI is set: Ink would
    // otherwise print only finished transcript lines, with no panels and no reply line to type in.
    interactive: true,
    // Rewrite only the lines that changed: the graph panel is mostly still while the live turn streams.
    incrementalRendering: true,
  };
}
