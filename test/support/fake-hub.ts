/**
 * A fake Hugging Face hub: a real HTTP server on 127.0.0.1 (random port) that serves files as the hub
 * serves files kept with Git LFS. A HEAD (or GET) on `/OWNER/NAME/resolve/main/FILE` answers 302 to
 * `/cdn/SHA256` with `x-linked-etag` (the SHA-256), `x-linked-size` and `x-repo-commit`; a GET on the
 * CDN path sends the bytes, honouring `Range: bytes=N-` with a 206. Faults are injected on the first
 * download of each file, and every request is logged.
 *
 * ```ts
 * const hub = await startFakeHub({ files: [{ repo: 'acme/tiny-GGUF', file: 'tiny.gguf', content }], cutAfter: 1000 });
 * // HF_ENDPOINT=hub.url …
 * expect(hub.count('GET', '/cdn/')).toBe(2);
 * await hub.close();
 * ```
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A file the hub serves. */
export interface HubFile {
  /** `owner/name`. */
  repo: string;
  /** Its path in the repository. */
  file: string;
  content: Buffer;
  /** Serve it as the hub serves a plain git file: 200 with a 40-hex git etag, no SHA-256. */
  notLfs?: boolean;
}

export interface FakeHubOptions {
  files: HubFile[];
  /** The first download of a file closes the connection after this many bytes of its body. */
  cutAfter?: number;
  /** The first download of a file sends this many bytes, then nothing more, keeping the connection open. */
  stallAfter?: number;
  /** Advertise a SHA-256 that is not the content's, as a hub serving a damaged file would. */
  wrongChecksum?: boolean;
  /** Advertise this size instead of the content's. */
  advertisedSize?: number;
  /** Answer every download with 200 and the whole file, as a server without Range support does. */
  ignoreRange?: boolean;
  /** Where downloads are redirected instead of this server (e.g. `https://cdn.test`): `${cdnBase}/cdn/SHA`. */
  cdnBase?: string;
}

/** A request as the hub received it. */
export interface HubRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
}

export interface FakeHub {
  url: string;
  requests: HubRequest[];
  /** How many requests had this method (any, when undefined) and a path starting with `pathPrefix`. */
  count: (method?: string, pathPrefix?: string) => number;
  close: () => Promise<void>;
}

/** The SHA-256 of `content`, lowercase hex, as the hub gives it. */
export function sha256(content: Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

export async function startFakeHub(options: FakeHubOptions): Promise<FakeHub> {
  const requests: HubRequest[] = [];
  const bySha = new Map(options.files.map((file) => [sha256(file.content), file]));
  const faulted = new Set<string>();
  const server = createServer((request, response) => {
    const path = request.url ?? '/';
    requests.push({ method: request.method ?? 'GET', path, headers: request.headers });
    if (path.startsWith('/cdn/')) return serveBytes(request, response, path.slice('/cdn/'.length));
    const match = /^\/([^/]+\/[^/]+)\/resolve\/main\/(.+)$/.exec(path);
    const file = match && options.files.find((entry) => entry.repo === match[1] && entry.file === match[2]);
    if (!file) return response.writeHead(404, { 'x-error-code': 'EntryNotFound' }).end();
    const sha = sha256(file.content);
    const commit = { 'x-repo-commit': sha.slice(0, 40) };
    if (file.notLfs) {
      const headers = { ...commit, etag: `"${sha.slice(0, 40)}"`, 'content-length': file.content.length };
      return response.writeHead(200, headers).end(request.method === 'HEAD' ? undefined : file.content);
    }
    response
      .writeHead(302, {
        ...commit,
        location: `${options.cdnBase ?? ''}/cdn/${sha}`,
        'x-linked-etag': `"${options.wrongChecksum ? sha256(Buffer.concat([file.content, Buffer.from('x')])) : sha}"`,
        'x-linked-size': String(options.advertisedSize ?? file.content.length),
      })
      .end();
  });

  function serveBytes(request: IncomingMessage, response: ServerResponse, sha: string): void {
    const file = bySha.get(sha);
    if (!file) return void response.writeHead(404).end();
    const total = file.content.length;
    const range = options.ignoreRange ? null : /^bytes=(\d+)-$/.exec(request.headers.range ?? '');
    const start = range ? Number(range[1]) : 0;
    if (start >= total && total > 0) {
      return void response.writeHead(416, { 'content-range': `bytes */${total}` }).end();
    }
    const body = file.content.subarray(start);
    response.writeHead(range ? 206 : 200, {
      'content-length': body.length,
      'accept-ranges': 'bytes',
      ...(range && { 'content-range': `bytes ${start}-${total - 1}/${total}` }),
    });
    if (request.method === 'HEAD') return void response.end();
    const fault = options.cutAfter ?? options.stallAfter;
    if (fault === undefined || faulted.has(sha)) return void response.end(body);
    faulted.add(sha);
    response.write(body.subarray(0, fault), () => {
      // A moment first, so the client reads what was sent: a dropped connection loses what is unread.
      if (options.cutAfter !== undefined) setTimeout(() => response.socket?.destroy(), 50);
    });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    count: (method, pathPrefix = '/') =>
      requests.filter(
        (request) => (!method || request.method === method) && request.path.startsWith(pathPrefix),
      ).length,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
