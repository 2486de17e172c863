/**
 * The waits a user sets for model servers, in milliseconds, from the environment: META_AGENT_TIMEOUT_MS
 * bounds every wait for a server to answer (calls, model lists), META_AGENT_DEADLINE_MS a whole call.
 */
import { UserError } from '../errors.js';

/** The variable's value; undefined when it is not set, a UserError (exit 2) when it is not a duration. */
export function millisecondsFromEnv(
  name: 'META_AGENT_TIMEOUT_MS' | 'META_AGENT_DEADLINE_MS',
): number | undefined {
  const raw = process.env[name];
  if (!raw) return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw new UserError(
      `${name} must be a positive number of milliseconds, not "${raw}"`,
      2,
      `for example ${name}=${name === 'META_AGENT_TIMEOUT_MS' ? '120000 for two minutes' : '1200000 for twenty minutes'}`,
    );
  }
  return value;
}
