/**
 * The served conversations' catalog in Postgres (catalog.ts says what it is): one row per conversation,
 * indexed on (owner, history) for the lookup of a client that resends a history, and on (owner, updated)
 * for a user's list.
 */
import { SCHEMA } from '../postgres/database.js';
import type { CatalogEntry, ConversationCatalog } from './catalog.js';
import type { Queryable } from './postgres-sql.js';

interface CatalogRow {
  id: string;
  graph: string;
  owner: string;
  created: string;
  updated: string;
  history: string | null;
}

const COLUMNS = 'id, graph, owner, created, updated, history';

/**
 * Records `entry` under its id, replacing what was there. It composes: run it on a client inside
 * inTransaction beside recordConversationState to save a turn's state and its entry together.
 */
export async function putCatalogEntry(db: Queryable, entry: CatalogEntry): Promise<void> {
  await db.query(
    `insert into ${SCHEMA}.catalog (${COLUMNS}) values ($1, $2, $3, $4, $5, $6)
     on conflict (id) do update set graph = excluded.graph, owner = excluded.owner, created = excluded.created,
       updated = excluded.updated, history = excluded.history`,
    [entry.id, entry.graph, entry.owner, entry.created, entry.updated, entry.history ?? null],
  );
}

/** Records `entry` unless a conversation holds its id already; true when it was recorded now. */
export async function createCatalogEntry(db: Queryable, entry: CatalogEntry): Promise<boolean> {
  const { rowCount } = await db.query(
    `insert into ${SCHEMA}.catalog (${COLUMNS}) values ($1, $2, $3, $4, $5, $6) on conflict (id) do nothing`,
    [entry.id, entry.graph, entry.owner, entry.created, entry.updated, entry.history ?? null],
  );
  return rowCount === 1;
}

/** The catalog of the store's tables, each lookup on `db`. */
export function catalogInDatabase(db: Queryable): ConversationCatalog {
  return {
    get: async (id) => {
      const { rows } = await db.query<CatalogRow>(`select ${COLUMNS} from ${SCHEMA}.catalog where id = $1`, [
        id,
      ]);
      return rows[0] && entryOf(rows[0]);
    },
    put: (entry) => putCatalogEntry(db, entry),
    list: async (owner) => {
      const { rows } = await db.query<CatalogRow>(
        `select ${COLUMNS} from ${SCHEMA}.catalog where owner = $1 order by updated desc`,
        [owner],
      );
      return rows.map(entryOf);
    },
    byHistory: async (owner, history) => {
      const { rows } = await db.query<{ id: string }>(
        `select id from ${SCHEMA}.catalog where owner = $1 and history = $2 order by updated desc limit 1`,
        [owner, history],
      );
      return rows[0]?.id;
    },
  };
}

function entryOf(row: CatalogRow): CatalogEntry {
  const { history, ...rest } = row;
  return history === null ? rest : { ...rest, history };
}
