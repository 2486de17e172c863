/**
 * The served conversations' catalog: whose each conversation is, of which graph, and the digest of the
 * history its client has seen (serve recognises a client that resends that history). The conversation
 * itself (its state) is kept by the `conversations` part under the entry's id; this part only tells a
 * server which ids exist and who may see them. It is its own part because only a server needs it.
 */
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { replaceFile } from '../write-file.js';

export interface CatalogEntry {
  id: string;
  /** The served graph's name. */
  graph: string;
  /** The API key's owner that made it (`local` on a server without keys). */
  owner: string;
  /** ISO times. */
  created: string;
  updated: string;
  /** The digest of the messages its client has seen (serve/history.ts); absent before the first turn. */
  history?: string;
}

export interface ConversationCatalog {
  get(id: string): Promise<CatalogEntry | undefined>;
  /** Records `entry` under its id, replacing what was there. */
  put(entry: CatalogEntry): Promise<void>;
  /** `owner`'s conversations, the most recently updated first. */
  list(owner: string): Promise<CatalogEntry[]>;
  /** The id of `owner`'s conversation whose client has seen the history of digest `history`, if any. */
  byHistory(owner: string, history: string): Promise<string | undefined>;
}

const entrySchema = z.object({
  id: z.string(),
  graph: z.string(),
  owner: z.string(),
  created: z.string(),
  updated: z.string(),
  history: z.string().optional(),
});

/** Ids name files, so they are kept to letters, digits, `.`, `_` and `-` (serve checks them first). */
export const CATALOG_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

/** A catalog held in the process: a map, with the lookups the others share. */
export function catalogInMemory(entries = new Map<string, CatalogEntry>()): ConversationCatalog {
  return {
    get: async (id) => entries.get(id),
    put: async (entry) => void entries.set(entry.id, { ...entry }),
    list: async (owner) =>
      [...entries.values()]
        .filter((entry) => entry.owner === owner)
        .sort((a, b) => b.updated.localeCompare(a.updated)),
    byHistory: async (owner, history) => {
      let found: CatalogEntry | undefined;
      for (const entry of entries.values())
        if (entry.owner === owner && entry.history === history && (!found || entry.updated > found.updated))
          found = entry;
      return found?.id;
    },
  };
}

/**
 * A catalog of one JSON file per conversation in `folder`, read once into memory on first use (this
 * process is its only writer) and written through atomically. A file that is not an entry is skipped.
 */
export function catalogInFolder(folder: string): ConversationCatalog {
  let loaded: Promise<ConversationCatalog> | undefined;
  let made: Promise<unknown> | undefined;
  // A server writes an entry at every turn of its conversation. Looking for a crashed writer's temporary
  // files lists the folder, one file per conversation, so it is done at the first write of each entry
  // only: after it, this process, the only writer, leaves none behind but by crashing itself.
  const written = new Set<string>();
  const memory = () => (loaded ??= readFolder(folder).then(catalogInMemory));
  return {
    get: async (id) => (await memory()).get(id),
    put: async (entry) => {
      if (!CATALOG_ID.test(entry.id)) throw new Error(`not a conversation id: ${JSON.stringify(entry.id)}`);
      await (made ??= mkdir(folder, { recursive: true, mode: 0o700 }));
      await replaceFile(join(folder, `${entry.id}.json`), `${JSON.stringify(entry)}\n`, {
        tempsRemoved: written.has(entry.id),
      });
      written.add(entry.id);
      await (await memory()).put(entry);
    },
    list: async (owner) => (await memory()).list(owner),
    byHistory: async (owner, history) => (await memory()).byHistory(owner, history),
  };
}

async function readFolder(folder: string): Promise<Map<string, CatalogEntry>> {
  const entries = new Map<string, CatalogEntry>();
  let names: string[];
  try {
    names = await readdir(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return entries;
    throw error;
  }
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    try {
      const entry = entrySchema.parse(JSON.parse(await readFile(join(folder, name), 'utf8')));
      if (`${entry.id}.json` === name) entries.set(entry.id, entry);
    } catch {
      // Not an entry (a stray or torn file): the conversation it named is unknown to the server.
    }
  }
  return entries;
}
