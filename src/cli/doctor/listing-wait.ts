/**
 * How long doctor waits for a server to list its models. META_AGENT_TIMEOUT_MS, which bounds every wait
 * for a model server in the CLI, sets it, as it sets the wait for the classification's answers (the
 * model reads it itself, in llm/openai.ts). Without it doctor gives a model list 5 s: a working server
 * sends the list from memory, in well under a second even from across the internet, and doctor should
 * say soon when one does not.
 */
import { UserError } from '../../errors.js';

export const DEFAULT_LISTING_WAIT_MS = 5_000;

/** The wait, and whether META_AGENT_TIMEOUT_MS chose it (so advice can name its value). */
export interface ListingWait {
  ms: number;
  fromEnv: boolean;
}

/** The wait `env` asks for; a UserError (exit 2) when META_AGENT_TIMEOUT_MS is not a positive number. */
export function listingWait(env: NodeJS.ProcessEnv = process.env): ListingWait {
  const raw = env.META_AGENT_TIMEOUT_MS;
  if (!raw) return { ms: DEFAULT_LISTING_WAIT_MS, fromEnv: false };
  const ms = Number(raw);
  if (!Number.isFinite(ms) || ms <= 0) {
    throw new UserError(
      `META_AGENT_TIMEOUT_MS must be a positive number of milliseconds, not "${raw}"`,
      2,
      'for example META_AGENT_TIMEOUT_MS=120000 for two minutes',
    );
  }
  return { ms, fromEnv: true };
}

/** What a user can do about a server that did not list its models within `wait`. */
export function longerWaitFix(wait: ListingWait): string {
  return wait.fromEnv
    ? `META_AGENT_TIMEOUT_MS is ${wait.ms}: raise it if the server is only slow`
    : `doctor waits ${wait.ms / 1000} s for a model list: set META_AGENT_TIMEOUT_MS (milliseconds) to wait longer`;
}
