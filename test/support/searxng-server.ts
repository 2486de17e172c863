/**
 * A loopback server on 127.0.0.1 that answers as a SearXNG instance's JSON API does
 * (`GET /search?q=…&format=json` → `{query, results: [{title, url, content, engine}]}`), for tests of
 * `google`. Every query is logged; `results` computes the answer, `status` replaces it with an error
 * (403 is what SearXNG answers when JSON is not enabled).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SearxngResult {
  title: string;
  url: string;
  content: string;
}

export interface SearxngServer {
  /** The instance's address, as META_AGENT_SEARCH_URL takes it. */
  readonly url: string;
  /** Each request's query parameters, in order. */
  readonly queries: URLSearchParams[];
  close(): Promise<void>;
}

export async function startSearxngServer(
  options: { results?: (query: string) => SearxngResult[]; status?: number } = {},
): Promise<SearxngServer> {
  const queries: URLSearchParams[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || url.pathname !== '/search') {
      res.writeHead(404).end();
      return;
    }
    queries.push(url.searchParams);
    if (options.status !== undefined || url.searchParams.get('format') !== 'json') {
      res.writeHead(options.status ?? 403, { 'content-type': 'text/html' }).end('<h1>Forbidden</h1>');
      return;
    }
    const query = url.searchParams.get('q') ?? '';
    const results = (options.results?.(query) ?? []).map((result) => ({ ...result, engine: 'loopback' }));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ query, number_of_results: results.length, results, answers: [], suggestions: [] }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    queries,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
