/**
 * The bounds of a design run and their defaults. A module of its own, apart from the designer's
 * helpers, so that the `design` command's help can name the default without loading the designer.
 */

/** Bounds of one design run. */
export interface DesignLimits {
  /** Fewest and most nodes a DOT draft may have. */
  minNodes: number;
  maxNodes: number;
  /** DOT drafts, the first included, before the design fails. */
  dotTries: number;
  /** Tries per node when its fields answer does not match the schema. */
  fieldTries: number;
  /** Lint-and-repair rounds before the design fails. */
  repairTries: number;
  /** Model calls in flight at once while node fields are written (see write-fields.ts). */
  concurrency: number;
}

/**
 * Defaults. The concurrency matches the largest draft, so a remote server writes the fields of any
 * accepted graph in one wave of one-node calls: round trips do not grow with the graph.
 */
export const DEFAULT_DESIGN_LIMITS: DesignLimits = {
  minNodes: 2,
  maxNodes: 40,
  dotTries: 3,
  fieldTries: 3,
  repairTries: 2,
  concurrency: 40,
};

/**
 * Calls in flight for a model server on this machine, which mostly answers a few at a time and would
 * keep the rest queued past the request timeout; the nodes are then asked for several to a call.
 */
export const LOCAL_CONCURRENCY = 4;

/** The concurrency for the server at `baseUrl` (none: a scripted model, which answers at once). */
export function designConcurrency(baseUrl: string | undefined): number {
  return baseUrl !== undefined && URL.canParse(baseUrl) && isLoopback(new URL(baseUrl).hostname)
    ? LOCAL_CONCURRENCY
    : DEFAULT_DESIGN_LIMITS.concurrency;
}

/** True for a host name that can only mean this machine. */
function isLoopback(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '[::1]' ||
    host === '0.0.0.0' ||
    /^127\.\d+\.\d+\.\d+$/.test(host)
  );
}
