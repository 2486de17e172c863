/**
 * Consent that outlives a process: the commands a user allowed "always" for a workspace, and the
 * approvals and `y -N` countdown a saved run carries. A workspace is shared with whoever can write to
 * it (a cloned repository, a synced folder, the agent itself), so nothing in it can grant consent.
 * Allow rules live in the user's own configuration folder; a run file's consent is sealed with a key
 * kept there (HMAC-SHA256), and a seal that does not verify grants nothing. When that folder lies
 * inside the workspace, where the agent's own file commands could reach it, nothing from it is trusted.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { canonicalJson } from '../canonical-json.js';

/** Bytes of the consent key. */
const KEY_BYTES = 32;
const KEY_FILE = 'consent.key';

/**
 * The user's meta-agent configuration folder: META_AGENT_CONFIG_DIR when set, else
 * $XDG_CONFIG_HOME/meta-agent (a relative value is ignored, as the XDG spec says), else the platform's
 * own: ~/.config/meta-agent on Linux, ~/Library/Application Support/meta-agent on macOS,
 * %APPDATA%\meta-agent on Windows.
 */
export function userConfigDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.META_AGENT_CONFIG_DIR) return resolve(env.META_AGENT_CONFIG_DIR);
  if (env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME)) return join(env.XDG_CONFIG_HOME, 'meta-agent');
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'meta-agent');
  if (process.platform === 'win32')
    return join(env.APPDATA || join(homedir(), 'AppData', 'Roaming'), 'meta-agent');
  return join(homedir(), '.config', 'meta-agent');
}

/**
 * Why the configuration folder cannot hold consent for `workspace` (both real paths), or undefined: it
 * must not be inside the workspace, where the agent's file commands reach.
 */
export function configInsideWorkspace(config: string, workspace: string): string | undefined {
  const inside = relative(workspace, config);
  if (inside === '' || (!inside.startsWith('..') && !isAbsolute(inside)))
    return `your configuration folder ${config} is inside the workspace, where the agent can write`;
  return undefined;
}

/** The key that seals consent, or why there is none (then nothing is sealed, and nothing verifies). */
export type ConsentKey = { key: Buffer } | { problem: string };

/** The consent key in `folder`, made (readable by its owner only) the first time it is needed. */
export async function consentKey(folder: string = userConfigDir()): Promise<ConsentKey> {
  const path = join(folder, KEY_FILE);
  try {
    return { key: await readKey(path) };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return { problem: keyProblem(path, error) };
  }
  try {
    await mkdir(folder, { recursive: true, mode: 0o700 });
    const key = randomBytes(KEY_BYTES);
    const handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    try {
      await handle.writeFile(`${key.toString('hex')}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    return { key };
  } catch (error) {
    // Another process made it first: theirs is the key.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return consentKey(folder);
    return { problem: keyProblem(path, error) };
  }
}

/** Reads a key file: a regular file (no link, FIFO or device) holding the key in hex. */
async function readKey(path: string): Promise<Buffer> {
  const flags = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
  const handle = await open(path, flags);
  try {
    const stats = await handle.stat();
    if (!stats.isFile() || stats.size > 4 * KEY_BYTES) throw new Error('it is not a key file');
    const text = (await handle.readFile('utf8')).trim();
    if (!new RegExp(`^[0-9a-f]{${2 * KEY_BYTES}}$`).test(text)) throw new Error('it is not a key file');
    return Buffer.from(text, 'hex');
  } finally {
    await handle.close();
  }
}

function keyProblem(path: string, error: unknown): string {
  const reason =
    (error as NodeJS.ErrnoException).code === 'ELOOP' ? 'it is a link' : (error as Error).message;
  return `the consent key ${path} cannot be used (${reason}); remove it to make a new one, or set META_AGENT_CONFIG_DIR`;
}

/** The seal of `value` for `purpose` (what it is, so a seal of one kind never passes for another). */
export function seal(key: Buffer, purpose: string, value: unknown): string {
  return createHmac('sha256', key)
    .update(`${purpose}\0${canonicalJson(value)}`)
    .digest('hex');
}

/** Whether `mark` is the seal of `value` for `purpose` under `key`. */
export function isSealed(key: Buffer, purpose: string, value: unknown, mark: string | undefined): boolean {
  if (mark === undefined || !/^[0-9a-f]{64}$/.test(mark)) return false;
  return timingSafeEqual(Buffer.from(seal(key, purpose, value), 'hex'), Buffer.from(mark, 'hex'));
}
