/**
 * Repositories cloned into the workspace for `clone_repository`. The URL, its server and what it sends
 * are untrusted: only http and https URLs without credentials, to hosts whose every address is public
 * unless the run allows private ones, and git talks only to the addresses that were checked (curl's resolve
 * pin), follows no redirect, and may use no other protocol (not file, ssh or ext). git runs with no
 * configuration of the user's or the system's, no credential helper and nothing to prompt with, no
 * hook or template, no submodules, symlinks checked out as plain files, and within a time and a size
 * cap; a clone that fails or passes a cap is removed.
 */
import { spawn } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isIP } from 'node:net';
import { join } from 'node:path';
import type { ClonedRepository, RepositoryCloner } from './command.js';
import { isPrivateAddress } from './web.js';
import { workspacePath } from './workspace-path.js';

export interface ClonePolicy {
  /** The workspace's real path. */
  root: string;
  /** Allow loopback, private and link-local addresses (a local git server). Default false. */
  allowPrivate?: boolean;
  /** The clone is stopped after this long. Default 120 s. */
  timeoutMs?: number;
  /** The most bytes the clone may take on disk. Default 200 MiB. */
  maxBytes?: number;
}

/** What the model is told when a clone is refused or fails. */
class CloneError extends Error {
  constructor(message: string) {
    super(`clone_repository: ${message}`);
  }
}

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_BYTES = 200 * 1024 * 1024;
/** How often the clone's size is measured while git runs. */
const SIZE_CHECK_MS = 500;

export class GitCloner implements RepositoryCloner {
  readonly #root: string;
  readonly #allowPrivate: boolean;
  readonly #timeoutMs: number;
  readonly #maxBytes: number;

  constructor(policy: ClonePolicy) {
    this.#root = policy.root;
    this.#allowPrivate = policy.allowPrivate ?? false;
    this.#timeoutMs = policy.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#maxBytes = policy.maxBytes ?? DEFAULT_MAX_BYTES;
  }

  async clone(repositoryUrl: string, clonePath: string, signal: AbortSignal): Promise<ClonedRepository> {
    const url = checkedUrl(repositoryUrl);
    const addresses = await this.#addresses(url);
    const relative = workspacePath(clonePath);
    const target = join(this.#root, relative);
    await mustBeFree(this.#root, relative);
    const home = await mkdtemp(join(tmpdir(), 'meta-agent-git-'));
    try {
      await this.#git(url, addresses, target, home, signal);
      const bytes = await sizeOf(target);
      if (bytes > this.#maxBytes) throw new CloneError(this.#tooBig());
      return { path: relative, bytes };
    } catch (error) {
      await rm(target, { recursive: true, force: true });
      throw error;
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  }

  /** The addresses git may connect to, once every address of the host passes the policy. */
  async #addresses(url: URL): Promise<string[]> {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    let addresses: string[];
    if (isIP(host) !== 0) addresses = [host];
    else {
      try {
        addresses = (await lookup(host, { all: true })).map((found) => found.address);
      } catch (error) {
        throw new CloneError(
          `${host} could not be found (${(error as NodeJS.ErrnoException).code ?? 'no answer'}); check the URL`,
        );
      }
    }
    const blocked = this.#allowPrivate ? undefined : addresses.find((address) => isPrivateAddress(address));
    if (blocked !== undefined)
      throw new CloneError(
        `${blocked === host ? `${host} is` : `${host} resolves to ${blocked},`} a private or local address; ` +
          'this run does not clone from those (the user allows them with --allow-private-network)',
      );
    if (addresses.length === 0) throw new CloneError(`${host} has no address; check the URL`);
    return addresses;
  }

  #tooBig(): string {
    return `the repository is larger than ${Math.round(this.#maxBytes / 1024 / 1024)} MiB, the most a clone may take; it was not kept`;
  }

  #git(url: URL, addresses: string[], target: string, home: string, signal: AbortSignal): Promise<void> {
    const port = url.port || (url.protocol === 'https:' ? '443' : '80');
    const checked = addresses.map((address) => (isIP(address) === 6 ? `[${address}]` : address));
    const pinned = `${url.hostname.replace(/^\[|\]$/g, '')}:${port}:${checked.join(',')}`;
    const config = [
      'protocol.allow=never',
      'protocol.http.allow=always',
      'protocol.https.allow=always',
      'http.followRedirects=false',
      `http.curloptResolve=${pinned}`,
      'credential.helper=',
      'core.hooksPath=/dev/null',
      'core.symlinks=false',
      'core.fsmonitor=false',
      'submodule.recurse=false',
      'transfer.fsckObjects=true',
    ].flatMap((setting) => ['-c', setting]);
    const args = [
      ...config,
      'clone',
      '--quiet',
      '--no-recurse-submodules',
      '--template=',
      '--',
      url.href,
      target,
    ];
    const child = spawn('git', args, {
      cwd: this.#root,
      env: {
        PATH: '/usr/local/bin:/usr/bin:/bin',
        HOME: home,
        LANG: 'C',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_TERMINAL_PROMPT: '0',
        GIT_ASKPASS: '/bin/false',
        SSH_ASKPASS: '/bin/false',
        GIT_ALLOW_PROTOCOL: 'http:https',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    return new Promise((resolve, reject) => {
      let errors = '';
      let stopped: string | undefined;
      const stop = (why: string) => {
        stopped ??= why;
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // It has ended already.
        }
      };
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        if (errors.length < 4000) errors += chunk;
      });
      const timer = setTimeout(
        () => stop(`the clone took longer than ${this.#timeoutMs / 1000} s and was stopped`),
        this.#timeoutMs,
      );
      // One measurement at a time: a large checkout takes a while to walk.
      let walking = false;
      const measuring = setInterval(() => {
        if (walking) return;
        walking = true;
        void sizeOf(target).then((bytes) => {
          walking = false;
          if (bytes > this.#maxBytes) stop(this.#tooBig());
        });
      }, SIZE_CHECK_MS);
      const onAbort = () => stop('the clone was cancelled');
      signal.addEventListener('abort', onAbort, { once: true });
      const done = (error?: Error) => {
        clearTimeout(timer);
        clearInterval(measuring);
        signal.removeEventListener('abort', onAbort);
        if (error) reject(error);
        else resolve();
      };
      child.on('error', (error) =>
        done(
          (error as NodeJS.ErrnoException).code === 'ENOENT'
            ? new CloneError('git is not installed on this machine')
            : error,
        ),
      );
      child.on('close', (code) => {
        if (stopped !== undefined) return done(new CloneError(stopped));
        if (code === 0) return done();
        done(new CloneError(`git could not clone ${url.href}: ${errors.trim() || `exit status ${code}`}`));
      });
    });
  }
}

/** The URL as git may fetch it: http or https, no credentials; anything else is refused with why. */
function checkedUrl(text: string): URL {
  if (!URL.canParse(text))
    throw new CloneError(
      `"${text}" is not a URL; give the repository's http or https address, as in https://github.com/owner/name.git`,
    );
  const url = new URL(text);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CloneError(
      `only http and https repositories can be cloned (not ${url.protocol}); give its https address`,
    );
  if (url.username !== '' || url.password !== '')
    throw new CloneError(
      'a URL with a user name or password is refused; clone a public repository without them',
    );
  return url;
}

/**
 * Refuses a destination that exists (unless an empty folder) or whose way passes through a symlink,
 * which could lead the clone out of the workspace.
 */
async function mustBeFree(root: string, relative: string): Promise<void> {
  const names = relative.split('/');
  let path = root;
  for (const [index, name] of names.entries()) {
    path = join(path, name);
    const stats = await lstat(path).catch(() => undefined);
    if (stats === undefined) return;
    if (stats.isSymbolicLink())
      throw new CloneError(
        `"${names.slice(0, index + 1).join('/')}" is a symlink; clone into a plain folder`,
      );
    const last = index === names.length - 1;
    if (!last && !stats.isDirectory())
      throw new CloneError(`"${names.slice(0, index + 1).join('/')}" is a file, not a folder`);
    if (last && (!stats.isDirectory() || (await readdir(path)).length > 0))
      throw new CloneError(`"${relative}" already exists; clone into a new or empty folder`);
  }
}

/** The bytes the files under `path` take (0 when it is not there yet); links are not followed. */
async function sizeOf(path: string): Promise<number> {
  const stats = await lstat(path).catch(() => undefined);
  if (stats === undefined) return 0;
  if (!stats.isDirectory()) return stats.size;
  const entries = await readdir(path).catch(() => []);
  let total = 0;
  for (const entry of entries) total += await sizeOf(join(path, entry));
  return total;
}
