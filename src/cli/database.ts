/**
 * Which database a command uses: `--database`, else META_AGENT_DATABASE_URL, else none (the files). A
 * URL that is not a postgres:// one is refused before anything starts.
 */
import { checkedUrl, DATABASE_ENV } from '../postgres/url.js';

export function databaseUrl(
  option: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const url = option ?? (env[DATABASE_ENV] || undefined);
  if (url !== undefined) checkedUrl(url);
  return url;
}
