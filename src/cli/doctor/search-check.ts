/**
 * Doctor's search line: the provider `google` searches through (a SearXNG at META_AGENT_SEARCH_URL, or
 * Brave with BRAVE_SEARCH_API_KEY), tried with one query, or that there is none and `google` is not
 * offered.
 */
import { isUserError } from '../../errors.js';
import { BRAVE_KEY_VARIABLE, SEARCH_URL_VARIABLE, searchFromEnv } from '../../../tools/web-search.js';
import type { Check } from './check.js';

/** The query doctor tries: any instance finds something for it. */
const PROBE_QUERY = 'SearXNG';

export async function checkSearch(env: NodeJS.ProcessEnv = process.env): Promise<Check> {
  let search;
  try {
    search = searchFromEnv(env);
  } catch (error) {
    if (!isUserError(error)) throw error;
    return { status: 'fail', name: 'search', detail: error.message, ...(error.hint && { fix: error.hint }) };
  }
  if (!search)
    return {
      status: 'ok',
      name: 'search',
      detail: `no search provider configured (${SEARCH_URL_VARIABLE} or ${BRAVE_KEY_VARIABLE}); runs do not offer google`,
    };
  try {
    const hits = await search.search(PROBE_QUERY, AbortSignal.timeout(30_000));
    return {
      status: hits.length > 0 ? 'ok' : 'warn',
      name: 'search',
      detail: `${search.provider} answered ${hits.length} result(s) for "${PROBE_QUERY}"; runs offer google`,
    };
  } catch (error) {
    return {
      status: 'fail',
      name: 'search',
      detail: (error as Error).message,
      fix: search.provider.startsWith('SearXNG')
        ? `check that ${SEARCH_URL_VARIABLE} is the address of a running SearXNG instance with JSON enabled`
        : `check the key in ${BRAVE_KEY_VARIABLE} and its plan at https://api-dashboard.search.brave.com`,
    };
  }
}
