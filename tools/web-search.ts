/**
 * Web search for `google`, through the provider the user configured: a SearXNG instance's JSON API at
 * META_AGENT_SEARCH_URL (`GET /search?q=…&format=json`, which the instance must enable in its
 * `search.formats`). The user named the URL, so it may be a loopback or private address, as a SearXNG
 * of one's own usually is; redirects are followed only within its origin. Its answer is untrusted: read
 * within a byte cap and a timeout, and only the fields a result needs are kept, each cut to a length.
 */
import { UserError } from '../src/errors.js';
import { guardedFetch, ResponseLimitError } from '../src/llm/guarded-fetch.js';
import type { SearchHit, WebSearch } from './command.js';

/** The variable that names the SearXNG instance. */
export const SEARCH_URL_VARIABLE = 'META_AGENT_SEARCH_URL';

/** Results kept of one search. */
export const MAX_HITS = 8;
/** Characters kept of a result's title, address and text. */
const MAX_FIELD_CHARS = { title: 200, href: 500, body: 600 };
const MAX_ANSWER_BYTES = 2 * 1024 * 1024;
const TIMEOUT_MS = 20_000;

/** A SearXNG instance's JSON API. */
export class SearxngSearch implements WebSearch {
  readonly provider: string;
  readonly #endpoint: URL;

  /** `base`: the instance's address (`http://localhost:8888`), with or without `/search`. */
  constructor(base: URL) {
    this.#endpoint = new URL(base.pathname.replace(/\/?(search)?\/?$/, '/search'), base);
    this.provider = `SearXNG at ${base.origin}${base.pathname === '/' ? '' : base.pathname}`;
  }

  async search(query: string, signal: AbortSignal): Promise<SearchHit[]> {
    const url = new URL(this.#endpoint);
    url.searchParams.set('q', query);
    url.searchParams.set('format', 'json');
    const deadline = AbortSignal.timeout(TIMEOUT_MS);
    let text: string;
    let status: number;
    try {
      const response = await guardedFetch({ idleMs: TIMEOUT_MS, maxBytes: MAX_ANSWER_BYTES })(url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.any([signal, deadline]),
      });
      status = response.status;
      text = await response.text();
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw new Error(`${this.provider} ${failure(error, deadline)}`, { cause: error });
    }
    if (status === 403)
      throw new Error(
        `${this.provider} refused JSON (403): its settings.yml must list json in search.formats`,
      );
    if (status !== 200) throw new Error(`${this.provider} answered HTTP ${status}`);
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      throw new Error(`${this.provider} answered with something that is not JSON; is it a SearXNG instance?`);
    }
    const results = (data as { results?: unknown }).results;
    if (!Array.isArray(results)) throw new Error(`${this.provider} answered JSON without a results list`);
    return results.flatMap(hit).slice(0, MAX_HITS);
  }
}

/** The search the environment configures, or undefined; a URL that is not one is a UserError (exit 2). */
export function searchFromEnv(env: NodeJS.ProcessEnv = process.env): WebSearch | undefined {
  const raw = env[SEARCH_URL_VARIABLE];
  if (!raw) return undefined;
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    throw new UserError(
      `${SEARCH_URL_VARIABLE} must be the http(s) address of a SearXNG instance, not "${raw}"`,
      2,
      HINT,
    );
  if (url.username !== '' || url.password !== '')
    throw new UserError(`${SEARCH_URL_VARIABLE} must not hold a user name or password`, 2, HINT);
  return new SearxngSearch(url);
}

const HINT = `for example ${SEARCH_URL_VARIABLE}=http://localhost:8888`;

/** One SearXNG result as AutoGPT's `google` gives it, or nothing for one without an address. */
function hit(result: unknown): SearchHit[] {
  if (typeof result !== 'object' || result === null) return [];
  const { title, url, content } = result as Record<string, unknown>;
  if (typeof url !== 'string' || url === '') return [];
  return [
    {
      title: cut(typeof title === 'string' ? title : '', MAX_FIELD_CHARS.title),
      href: cut(url, MAX_FIELD_CHARS.href),
      body: cut(typeof content === 'string' ? content : '', MAX_FIELD_CHARS.body),
    },
  ];
}

function cut(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

function failure(error: unknown, deadline: AbortSignal): string {
  if (deadline.aborted) return `took longer than ${TIMEOUT_MS / 1000} s and was abandoned`;
  if (error instanceof ResponseLimitError || (error as Error).cause instanceof ResponseLimitError)
    return `sent an answer larger than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB`;
  const cause = (error as Error).cause as NodeJS.ErrnoException | undefined;
  return `could not be reached (${cause?.code ?? cause?.message ?? (error as Error).message})`;
}
