/**
 * How long doctor waits for a server to list its models. META_AGENT_TIMEOUT_MS, which bounds every wait
 * for a model server in the CLI, sets it, as it sets the wait for the classification's answers (the
 * model reads it itself, in llm/openai.ts). Without it doctor gives a model list 5 s: a working server
 * sends the list from memory, in well under a second even from across the internet, and doctor should
 * say soon when one does not.
 */
import { millisecondsFromEnv } from '../../llm/timeouts.js';

export const DEFAULT_LISTING_WAIT_MS = 5_000;

/** The wait, and whether META_AGENT_TIMEOUT_MS chose it (so advice can name its value). */
export interface ListingWait {
  ms: number;
  fromEnv: boolean;
}

/** The wait the environment asks for; a UserError (exit 2) when META_AGENT_TIMEOUT_MS is not a duration. */
export function listingWait(): ListingWait {
  const ms = millisecondsFromEnv('META_AGENT_TIMEOUT_MS');
  return ms === undefined ? { ms: DEFAULT_LISTING_WAIT_MS, fromEnv: false } : { ms, fromEnv: true };
}

/** What a user can do about a server that did not list its models within `wait`. */
export function longerWaitFix(wait: ListingWait): string {
  return wait.fromEnv
    ? `META_AGENT_TIMEOUT_MS is ${wait.ms}: raise it if the server is only slow`
    : `doctor waits ${wait.ms / 1000} s for a model list: set META_AGENT_TIMEOUT_MS (milliseconds) to wait longer`;
}
