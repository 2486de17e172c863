/** How every terminal view is mounted: on which streams, and with which Ink options. */

/** Streams to draw on and read from, for embedding; the process's own by default. */
export interface TerminalStreams {
  stdout?: NodeJS.WriteStream;
  stdin?: NodeJS.ReadStream;
  /** Print `console.*` output above the view instead of through it (default true). */
  patchConsole?: boolean;
}

/** Ink's options for a view on `streams`. */
export function renderOptions(streams: TerminalStreams) {
  return {
    ...(streams.stdout ? { stdout: streams.stdout } : {}),
    ...(streams.stdin ? { stdin: streams.stdin } : {}),
    ...(streams.patchConsole !== undefined ? { patchConsole: streams.patchConsole } : {}),
    // Ink never exits on Ctrl+C by itself: the view or the CLI handles it, so a run can save first.
    exitOnCtrlC: false,
    // The CLI mounts a view only on a terminal, so draw it there even when CI is set: Ink would
    // otherwise print only the final frame, with no live panels and no line to type in.
    interactive: true,
    // Rewrite only the lines that changed: most of a view is still while one part streams.
    incrementalRendering: true,
  };
}
