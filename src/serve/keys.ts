/**
 * API keys. A server either asks for none (then it listens on loopback only, and every request is the
 * `local` owner's) or for one of its keys in `Authorization: Bearer KEY`. Keys are held as SHA-256
 * digests: from META_AGENT_API_KEYS (keys, comma-separated) or a file of digests (`--api-keys FILE`,
 * one `DIGEST [OWNER]` per line, `#` comments), so the file gives nothing away. A key's owner is the
 * name given beside it, or the start of its digest; each owner sees only its own conversations and runs.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { UserError } from '../errors.js';

/** Key digest -> owner. */
export type KeyRing = ReadonlyMap<string, string>;

export const KEYS_VARIABLE = 'META_AGENT_API_KEYS';

/** The digest a key is held as: what a keys file lists (`printf %s KEY | sha256sum`). */
export function keyDigest(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** The owner of the key a request carries; undefined when it is none of the ring's. */
export function ownerOf(ring: KeyRing, authorization: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return match ? ring.get(keyDigest(match[1]!)) : undefined;
}

/** The keys of the environment and of `file`; undefined when neither names any. */
export async function loadKeys(
  env: NodeJS.ProcessEnv,
  file: string | undefined,
): Promise<KeyRing | undefined> {
  const ring = new Map<string, string>();
  for (const key of (env[KEYS_VARIABLE] ?? '').split(',').map((k) => k.trim()))
    if (key) ring.set(keyDigest(key), ownerName(keyDigest(key)));
  if (file !== undefined) for (const [digest, owner] of await readKeysFile(file)) ring.set(digest, owner);
  return ring.size > 0 ? ring : undefined;
}

async function readKeysFile(path: string): Promise<Array<[string, string]>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new UserError(`--api-keys: cannot read ${path} (${(error as NodeJS.ErrnoException).code})`, 2);
  }
  const entries: Array<[string, string]> = [];
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.replace(/#.*/, '').trim();
    if (!line) continue;
    const [digest, owner, ...rest] = line.split(/\s+/);
    if (
      !/^[0-9a-f]{64}$/i.test(digest!) ||
      rest.length > 0 ||
      (owner !== undefined && !/^[\w.-]{1,64}$/.test(owner))
    )
      throw new UserError(
        `${path}:${index + 1}: expected a key's SHA-256 digest (64 hex digits), then an optional owner name`,
        2,
        'make a line with: printf %s "$KEY" | sha256sum | cut -d" " -f1',
      );
    entries.push([digest!.toLowerCase(), owner ?? ownerName(digest!.toLowerCase())]);
  }
  if (entries.length === 0) throw new UserError(`--api-keys: ${path} lists no keys`, 2);
  return entries;
}

/** An owner named after its key: the start of the key's digest, which says nothing of the key. */
function ownerName(digest: string): string {
  return `key-${digest.slice(0, 12)}`;
}
