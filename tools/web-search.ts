/**
 * Web search for `google`, through the provider the user configured: a SearXNG instance's JSON API at
 * META_AGENT_SEARCH_URL (`GET /search?q=…&format=json`, which the instance must enable in its
 * `search.formats`), or else Brave's Web Search API with the key in BRAVE_SEARCH_API_KEY (`GET
 * /res/v1/web/search?q=…`, the key in `X-Subscription-Token`). The user named the URL, so a SearXNG may
 * be on a loopback or private address, as one's own usually is; redirects are followed only within its
 * origin, so Brave's key goes nowhere else. An answer is untrusted: read within a byte cap and a
 * timeout, and only the fields a result needs are kept, each cut to a length.
 */
import { UserError } from '../src/errors.js';
import { guardedFetch, ResponseLimitError } from '../src/llm/guarded-fetch.js';
import type { SearchHit, WebSearch } from './command.js';

/** The variable that names the SearXNG instance. */
export const SEARCH_URL_VARIABLE = 'META_AGENT_SEARCH_URL';
/** The variable that holds a Brave Search API key, used when no SearXNG is named. */
export const BRAVE_KEY_VARIABLE = 'BRAVE_SEARCH_API_KEY';
/** Another address for Brave's web search endpoint (a proxy in front of it). */
const BRAVE_URL_VARIABLE = 'META_AGENT_BRAVE_SEARCH_URL';
const BRAVE_SEARCH_URL = 'https://api.search.brave.com/res/v1/web/search';

/** Results kept of one search. */
const MAX_HITS = 8;
/** Characters kept of a result's title, address and text. */
const MAX_FIELD_CHARS = { title: 200, href: 500, body: 600 };
const MAX_ANSWER_BYTES = 2 * 1024 * 1024;
const TIMEOUT_MS = 20_000;

/** One search request, as a provider makes it, and how it reads the answer. */
interface Provider {
  name: string;
  request(query: string): { url: URL; headers: Record<string, string> };
  /** The results of a 200 answer's JSON; an Error for JSON of another shape. */
  results(data: unknown): SearchHit[];
  /** What a status other than 200 means, in words. */
  refusal(status: number, body: string): string;
}

/** A search through one provider. */
class ProviderSearch implements WebSearch {
  readonly provider: string;
  readonly #provider: Provider;

  constructor(provider: Provider) {
    this.#provider = provider;
    this.provider = provider.name;
  }

  async search(query: string, signal: AbortSignal): Promise<SearchHit[]> {
    const { url, headers } = this.#provider.request(query);
    const deadline = AbortSignal.timeout(TIMEOUT_MS);
    let text: string;
    let status: number;
    try {
      const response = await guardedFetch({ idleMs: TIMEOUT_MS, maxBytes: MAX_ANSWER_BYTES })(url, {
        headers: { accept: 'application/json', ...headers },
        signal: AbortSignal.any([signal, deadline]),
      });
      status = response.status;
      text = await response.text();
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw new Error(`${this.provider} ${failure(error, deadline)}`, { cause: error });
    }
    if (status !== 200) throw new Error(`${this.provider} ${this.#provider.refusal(status, text)}`);
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      throw new Error(`${this.provider} answered with something that is not JSON`);
    }
    return this.#provider.results(data).slice(0, MAX_HITS);
  }
}

/** A SearXNG instance's JSON API; `base` is its address (`http://localhost:8888`), with or without `/search`. */
function searxngSearch(base: URL): WebSearch {
  const endpoint = new URL(base.pathname.replace(/\/?(search)?\/?$/, '/search'), base);
  const name = `SearXNG at ${base.origin}${base.pathname === '/' ? '' : base.pathname}`;
  return new ProviderSearch({
    name,
    request(query) {
      const url = new URL(endpoint);
      url.searchParams.set('q', query);
      url.searchParams.set('format', 'json');
      return { url, headers: {} };
    },
    results(data) {
      const results = (data as { results?: unknown } | null)?.results;
      if (!Array.isArray(results)) throw new Error(`${name} answered JSON without a results list`);
      return results.flatMap((result) => hit(result, 'content'));
    },
    refusal: (status) =>
      status === 403
        ? 'refused JSON (403): its settings.yml must list json in search.formats'
        : `answered HTTP ${status}`,
  });
}

/** Brave's Web Search API with `key`, at `endpoint` (Brave's own unless a proxy is named). */
function braveSearch(key: string, endpoint: URL = new URL(BRAVE_SEARCH_URL)): WebSearch {
  const name = `Brave Search${endpoint.href === BRAVE_SEARCH_URL ? '' : ` at ${endpoint.origin}`}`;
  return new ProviderSearch({
    name,
    request(query) {
      const url = new URL(endpoint);
      url.searchParams.set('q', query);
      url.searchParams.set('count', String(MAX_HITS));
      return { url, headers: { 'x-subscription-token': key } };
    },
    results(data) {
      const web = (data as { web?: { results?: unknown } } | null)?.web;
      // A query with no web results has no `web` section at all.
      if (web === undefined) return [];
      if (!Array.isArray(web.results)) throw new Error(`${name} answered JSON without web results`);
      return web.results.flatMap((result) => hit(result, 'description'));
    },
    refusal(status, body) {
      const detail = braveDetail(body);
      if (status === 401 || status === 403 || status === 422)
        return `refused the key in ${BRAVE_KEY_VARIABLE} (HTTP ${status}${detail})`;
      if (status === 429) return `said too many searches were made (HTTP 429${detail}); wait, or search less`;
      return `answered HTTP ${status}${detail}`;
    },
  });
}

/**
 * The search the environment configures (a SearXNG, else Brave with a key), or undefined; a setting
 * that cannot be used is a UserError (exit 2).
 */
export function searchFromEnv(env: NodeJS.ProcessEnv = process.env): WebSearch | undefined {
  const raw = env[SEARCH_URL_VARIABLE];
  if (raw) return searxngSearch(httpUrl(SEARCH_URL_VARIABLE, raw, 'a SearXNG instance', SEARXNG_HINT));
  const key = env[BRAVE_KEY_VARIABLE];
  if (!key) return undefined;
  const proxy = env[BRAVE_URL_VARIABLE];
  return braveSearch(
    key,
    proxy
      ? httpUrl(
          BRAVE_URL_VARIABLE,
          proxy,
          "Brave's web search API",
          `for example ${BRAVE_URL_VARIABLE}=${BRAVE_SEARCH_URL}`,
        )
      : undefined,
  );
}

const SEARXNG_HINT = `for example ${SEARCH_URL_VARIABLE}=http://localhost:8888`;

function httpUrl(variable: string, raw: string, what: string, hint: string): URL {
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    throw new UserError(`${variable} must be the http(s) address of ${what}, not "${raw}"`, 2, hint);
  if (url.username !== '' || url.password !== '')
    throw new UserError(`${variable} must not hold a user name or password`, 2, hint);
  return url;
}

/** One result as AutoGPT's `google` gives it, its text from `textField`; nothing for one without an address. */
function hit(result: unknown, textField: 'content' | 'description'): SearchHit[] {
  if (typeof result !== 'object' || result === null) return [];
  const { title, url, [textField]: text } = result as Record<string, unknown>;
  if (typeof url !== 'string' || url === '') return [];
  return [
    {
      title: cut(typeof title === 'string' ? plain(title) : '', MAX_FIELD_CHARS.title),
      href: cut(url, MAX_FIELD_CHARS.href),
      body: cut(typeof text === 'string' ? plain(text) : '', MAX_FIELD_CHARS.body),
    },
  ];
}

/** Text without the markup search engines put in snippets (`<strong>`) and its common entities. */
function plain(text: string): string {
  return text
    .replace(/<[^>]*>/g, '')
    .replace(/&(quot|#39|apos|lt|gt|amp);/g, (_, name: string) => ENTITIES[name] ?? '');
}

const ENTITIES: Readonly<Record<string, string>> = {
  quot: '"',
  '#39': "'",
  apos: "'",
  lt: '<',
  gt: '>',
  amp: '&',
};

function cut(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

/** `: what Brave said` from its error body, short; nothing when there is none. */
function braveDetail(body: string): string {
  try {
    const detail = (JSON.parse(body) as { error?: { detail?: unknown } }).error?.detail;
    return typeof detail === 'string' && detail.trim() !== '' ? `: ${cut(detail, 200)}` : '';
  } catch {
    return '';
  }
}

function failure(error: unknown, deadline: AbortSignal): string {
  if (deadline.aborted) return `took longer than ${TIMEOUT_MS / 1000} s and was abandoned`;
  if (error instanceof ResponseLimitError || (error as Error).cause instanceof ResponseLimitError)
    return `sent an answer larger than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB`;
  const cause = (error as Error).cause as NodeJS.ErrnoException | undefined;
  return `could not be reached (${cause?.code ?? cause?.message ?? (error as Error).message})`;
}
