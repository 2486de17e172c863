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
  /** Per-node model calls in flight at once. */
  concurrency: number;
}

/**
 * Defaults. The concurrency matches the largest draft, so writing the fields of any accepted graph
 * takes one round of calls: round trips do not grow with the graph. A server that runs only a few
 * requests at once would keep the rest queued past the request timeout, so the CLI uses a lower
 * default for a server on the same machine (`--concurrency` sets it either way).
 */
export const DEFAULT_DESIGN_LIMITS: DesignLimits = {
  minNodes: 2,
  maxNodes: 40,
  dotTries: 3,
  fieldTries: 3,
  repairTries: 2,
  concurrency: 40,
};

/** Per-node calls in flight for a model server on this machine, which mostly answers a few at a time. */
export const LOCAL_CONCURRENCY = 4;
