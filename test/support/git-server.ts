/**
 * A real git server on 127.0.0.1 (random port): git's own smart-HTTP CGI, `git http-backend`, behind
 * node:http, serving bare repositories made from files the test gives. Every request is logged with its
 * headers, so a test can tell what a client sent and whether it came at all.
 *
 * ```ts
 * const git = await startGitServer({ 'hello.git': { 'README.md': 'hi' } });
 * // git clone `${git.url}/hello.git`
 * await git.close();
 * ```
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface GitServer {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  requests: Array<{ method: string; url: string; headers: IncomingHttpHeaders }>;
  close(): Promise<void>;
}

/** git with nothing of the developer's configuration. */
const GIT_ENV = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: tmpdir(),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
};

/** Starts a server with one bare repository per entry of `repositories` (name -> files, path -> text). */
export async function startGitServer(
  repositories: Record<string, Record<string, string>>,
): Promise<GitServer> {
  const root = mkdtempSync(join(tmpdir(), 'git-server-'));
  for (const [name, files] of Object.entries(repositories)) makeRepository(root, name, files);
  const requests: GitServer['requests'] = [];
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    const url = new URL(req.url ?? '/', 'http://localhost');
    const cgi = spawn('git', ['http-backend'], {
      env: {
        ...GIT_ENV,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        REQUEST_METHOD: req.method ?? 'GET',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        REMOTE_ADDR: '127.0.0.1',
        HTTP_CONTENT_ENCODING: req.headers['content-encoding'] ?? '',
        GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
      },
      stdio: 'pipe',
    });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let started = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (started) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      started = true;
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const colon = line.indexOf(':');
        const [name, value] = [line.slice(0, colon).trim(), line.slice(colon + 1).trim()];
        if (name.toLowerCase() === 'status') res.statusCode = Number.parseInt(value, 10);
        else res.setHeader(name, value);
      }
      res.write(head.subarray(end + 4));
    });
    cgi.on('close', () => res.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function makeRepository(root: string, name: string, files: Record<string, string>): void {
  const work = mkdtempSync(join(tmpdir(), 'git-work-'));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: work, env: GIT_ENV, stdio: 'pipe' });
  git('init', '--quiet', '--initial-branch=main');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(work, path)), { recursive: true });
    writeFileSync(join(work, path), text);
  }
  git('add', '--all');
  git('commit', '--quiet', '-m', 'first');
  git('clone', '--quiet', '--bare', work, join(root, name));
}
