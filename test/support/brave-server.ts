/**
 * A loopback server on 127.0.0.1 that answers as Brave's Web Search API does
 * (`GET /res/v1/web/search?q=…` with the key in `X-Subscription-Token` →
 * `{type: 'search', query, web: {type: 'search', results: [{title, url, description}]}}`; a wrong key
 * gets Brave's 422 error body), for tests of `google` with a keyed provider. Every request is logged.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BraveResult {
  title: string;
  url: string;
  description: string;
}

export interface BraveServer {
  /** The endpoint's address, as META_AGENT_BRAVE_SEARCH_URL takes it. */
  readonly url: string;
  readonly requests: Array<{ query: URLSearchParams; headers: IncomingHttpHeaders }>;
  close(): Promise<void>;
}

export async function startBraveServer(
  key: string,
  results: (query: string) => BraveResult[],
): Promise<BraveServer> {
  const requests: BraveServer['requests'] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || url.pathname !== '/res/v1/web/search') {
      res.writeHead(404).end();
      return;
    }
    requests.push({ query: url.searchParams, headers: req.headers });
    res.setHeader('content-type', 'application/json');
    if (req.headers['x-subscription-token'] !== key) {
      res.writeHead(422).end(
        JSON.stringify({
          type: 'ErrorResponse',
          error: {
            code: 'SUBSCRIPTION_TOKEN_INVALID',
            detail: 'The provided subscription token is invalid.',
            status: 422,
          },
        }),
      );
      return;
    }
    const query = url.searchParams.get('q') ?? '';
    const found = results(query).map((result) => ({ type: 'search_result', ...result }));
    res.writeHead(200).end(
      JSON.stringify({
        type: 'search',
        query: { original: query },
        ...(found.length > 0 && { web: { type: 'search', results: found } }),
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/res/v1/web/search`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
