/** How a long-running command (serve, worker) is asked to stop: SIGTERM, or Ctrl+C. */

/**
 * Resolves with the signal that asks the process to stop: SIGTERM or SIGINT (Ctrl+C). A second signal
 * while it winds down ends it at once (exit 0 for SIGTERM, 130 for Ctrl+C).
 */
export function stopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      process.once('SIGTERM', () => process.exit(0));
      process.once('SIGINT', () => process.exit(130));
      resolve(signal);
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}
