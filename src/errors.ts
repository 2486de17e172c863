/**
 * An error a user can act on: the CLI prints its message (and hint) on one line each, never a stack trace.
 * A leaf module: every layer may import it.
 */
export class UserError extends Error {
  override readonly name = 'UserError';
  constructor(
    message: string,
    /** 1: the work failed; 2: usage or configuration is wrong; 130: the user interrupted it (Ctrl+C). */
    readonly exitCode: 1 | 2 | 130 = 1,
    /** What to do about it, when there is something to say. */
    readonly hint?: string,
  ) {
    super(message);
  }
}

/**
 * A file that was read but whose content cannot be used: empty, malformed, against its schema, or a
 * graph with lint errors. Exit code 2, as any input that must be fixed before the work can start;
 * `validate`, whose work is finding such problems, reports them with exit code 1 instead.
 */
export class InvalidFileError extends UserError {
  constructor(message: string, hint?: string) {
    super(message, 2, hint);
  }
}

/** True for errors meant for the user (ours, or anything carrying `userFacing: true`). */
export function isUserError(error: unknown): error is UserError {
  return error instanceof UserError;
}

/**
 * The hint for a limit set in a graph's config (`field`: its path under `config`). A spreadsheet has no
 * config of its own, so it is first exported as a JSON graph, whose config can be edited.
 */
export function raiseConfigHint(field: string): string {
  return `raise config.${field} in the graph file, or in a spreadsheet's --format json export`;
}
