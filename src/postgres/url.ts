/**
 * The database URL, checked and shown without its password: apart from the pool (database.ts) so that a
 * command can tell whether it runs on a database without loading the PostgreSQL client.
 */
import { UserError } from '../errors.js';

/** The variable that switches meta-agent from files to Postgres (`--database` overrides it). */
export const DATABASE_ENV = 'META_AGENT_DATABASE_URL';

/** The URL's parts, or a UserError saying what is wrong with it. */
export function checkedUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UserError(
      `the database URL is not a URL: ${JSON.stringify(url)}`,
      2,
      'it looks like postgres://USER:PASSWORD@HOST:5432/DATABASE',
    );
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:')
    throw new UserError(`the database URL must start with postgres://, not ${parsed.protocol}//`, 2);
  return parsed;
}

/** The URL as it may be shown: without its password. */
export function shownUrl(url: string): string {
  const parsed = checkedUrl(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}
