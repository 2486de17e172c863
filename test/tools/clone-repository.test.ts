/**
 * clone_repository against a real git server on loopback (git http-backend): what it clones, and what it
 * refuses before git talks to anyone (private hosts unless allowed, other protocols, credentials, a
 * destination that exists or leads out), and a clone past its size cap not kept.
 */
import { mkdir, mkdtemp, readFile, readdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloneRepository } from '../../tools/clone-repository.js';
import { GitCloner } from '../../tools/git-clone.js';
import { startGitServer, type GitServer } from '../support/git-server.js';

let server: GitServer;
beforeAll(async () => {
  server = await startGitServer({
    'hello.git': { 'README.md': '# hello\n', 'src/index.js': 'console.log("hi");\n' },
    'big.git': { 'data.txt': 'x'.repeat(200_000) },
  });
});
afterAll(() => server.close());

const never = new AbortController().signal;

async function workspace(): Promise<string> {
  return realpath(await mkdtemp(join(tmpdir(), 'clone-ws-')));
}

async function clone(
  root: string,
  url: string,
  path: string,
  policy: { allowPrivate?: boolean; maxBytes?: number } = {},
) {
  const git = new GitCloner({ root, allowPrivate: true, ...policy });
  return cloneRepository.run({ repository_url: url, clone_path: path }, { git, signal: never });
}

describe('clone_repository', () => {
  it('clones a repository into a new folder of the workspace, sending no credentials', async () => {
    const root = await workspace();
    const result = await clone(root, `${server.url}/hello.git`, 'repos/hello');
    expect(result.output).toMatch(
      new RegExp(`^Cloned ${server.url}/hello\\.git into repos/hello \\([\\d,]+ bytes\\)\\.$`),
    );
    expect(result.files).toEqual([{ path: 'repos/hello', change: 'write' }]);
    expect(await readFile(join(root, 'repos/hello/src/index.js'), 'utf8')).toBe('console.log("hi");\n');
    expect(await readdir(join(root, 'repos/hello/.git'))).not.toContain('hooks');
    expect(server.requests.length).toBeGreaterThan(0);
    expect(server.requests.every((request) => request.headers.authorization === undefined)).toBe(true);
  });

  it('refuses loopback and private hosts unless the run allows them, before any request', async () => {
    const before = server.requests.length;
    await expect(
      clone(await workspace(), `${server.url}/hello.git`, 'hello', { allowPrivate: false }),
    ).rejects.toThrow(
      'clone_repository: 127.0.0.1 is a private or local address; this run does not clone from those ' +
        '(the user allows them with --allow-private-network)',
    );
    expect(server.requests.length).toBe(before);
  });

  it('refuses other protocols, local paths and URLs with credentials', async () => {
    const root = await workspace();
    const before = server.requests.length;
    await expect(clone(root, `file://${root}`, 'a')).rejects.toThrow(
      'clone_repository: only http and https repositories can be cloned (not file:)',
    );
    await expect(clone(root, '/etc', 'a')).rejects.toThrow('clone_repository: "/etc" is not a URL');
    await expect(clone(root, 'ext::sh -c touch% /tmp/pwned', 'a')).rejects.toThrow(/not ext:|is not a URL/);
    await expect(clone(root, 'ssh://git@example.com/x.git', 'a')).rejects.toThrow(/not ssh:/);
    await expect(clone(root, `http://user:secret@127.0.0.1:1/x.git`, 'a')).rejects.toThrow(
      'clone_repository: a URL with a user name or password is refused',
    );
    expect(server.requests.length).toBe(before);
    expect(await readdir(root)).toEqual([]);
  });

  it('refuses a destination outside the workspace, in its state folder, existing or through a symlink', async () => {
    const root = await workspace();
    const url = `${server.url}/hello.git`;
    await expect(clone(root, url, '../out')).rejects.toThrow(/contains "\.\."/);
    await expect(clone(root, url, '/tmp/out')).rejects.toThrow(/is absolute/);
    await expect(clone(root, url, '.meta-agent/x')).rejects.toThrow(/\.meta-agent/);
    await writeFile(join(root, 'notes.txt'), 'mine');
    await expect(clone(root, url, 'notes.txt')).rejects.toThrow('"notes.txt" already exists');
    expect(await readFile(join(root, 'notes.txt'), 'utf8')).toBe('mine');
    const elsewhere = await mkdtemp(join(tmpdir(), 'clone-elsewhere-'));
    await symlink(elsewhere, join(root, 'link'));
    await expect(clone(root, url, 'link/hello')).rejects.toThrow(
      '"link" is a symlink; clone into a plain folder',
    );
    expect(await readdir(elsewhere)).toEqual([]);
    await mkdir(join(root, 'empty'));
    await clone(root, url, 'empty');
    expect(await readFile(join(root, 'empty/README.md'), 'utf8')).toBe('# hello\n');
  });

  it('does not keep a clone larger than its cap', async () => {
    const root = await workspace();
    await expect(clone(root, `${server.url}/big.git`, 'big', { maxBytes: 50_000 })).rejects.toThrow(
      /^clone_repository: the repository is larger than/,
    );
    expect(await readdir(root)).toEqual([]);
  });

  it('says so when the server has no such repository', async () => {
    const root = await workspace();
    await expect(clone(root, `${server.url}/missing.git`, 'missing')).rejects.toThrow(
      new RegExp(`^clone_repository: git could not clone ${server.url}/missing\\.git: .*not found`),
    );
    expect(await readdir(root)).toEqual([]);
  });
});
