/**
 * Conversations in Postgres. Each reply's state is recorded twice, in one transaction: as a row of
 * `conversation_turns` under (key, turn), holding what the reply changed (state-delta.ts) and a digest
 * of the whole state, which keeps the turn unique; and as the conversation's current state in
 * `conversations`, so a load is one row, however long the conversation. The turns' rows grow with what
 * each reply changed, not with the conversation's length, so a long conversation is not stored again
 * at every turn; the current state is replaced in place.
 */
import { parseState, type ConversationState } from '../engine/state.js';
import { UserError } from '../errors.js';
import { SCHEMA } from '../postgres/database.js';
import { recordUnique, type Queryable } from './postgres-sql.js';
import { applyDelta, stateDelta } from './state-delta.js';

/** The current state of the conversation `key`, checked; undefined when there is none. */
export async function loadConversationState(
  db: Queryable,
  key: string,
): Promise<ConversationState | undefined> {
  const { rows } = await db.query<{ state: unknown }>(
    `select state from ${SCHEMA}.conversations where key = $1`,
    [key],
  );
  return rows[0] === undefined ? undefined : parseState(rows[0].state, conversationSource(key));
}

/**
 * Records the state a reply of the conversation `key` ended at, under (key, turn = state.steps): the
 * same state again changes nothing, another state under a turn already recorded is a DuplicateWrite
 * (thrown before anything is written). The current state moves to it unless a later turn is recorded
 * already. `before`, the state the reply started from when the caller has it, makes the turn's row
 * hold only what the reply changed; without it the row holds the whole state.
 *
 * It composes: run it on a client inside inTransaction with other writes (a catalog entry, a served
 * reply) to land them together. On the pool alone it is still safe to repeat after a failure.
 * Returns whether the turn was recorded now (false: it was recorded before, with this state).
 */
export async function recordConversationState(
  db: Queryable,
  key: string,
  state: ConversationState,
  before?: ConversationState,
): Promise<boolean> {
  const turn = state.steps;
  const delta = before && before.steps < turn ? stateDelta(before, state) : undefined;
  const recorded = await recordUnique(
    db,
    'conversation_turns',
    ['turn'],
    'conversation',
    key,
    [
      {
        columns: [turn],
        name: `turn ${turn}`,
        value: state,
        extra: [delta ? before!.steps : null, JSON.stringify(delta ?? state)],
      },
    ],
    ['base', 'delta'],
  );
  // Also when the turn was held: a save that failed between the two writes is completed by its retry.
  await db.query(
    `insert into ${SCHEMA}.conversations as c (key, turn, state) values ($1, $2, $3)
     on conflict (key) do update set turn = excluded.turn, state = excluded.state, updated_at = now()
     where c.turn <= excluded.turn`,
    [key, turn, JSON.stringify(state)],
  );
  return recorded.length > 0;
}

/**
 * The state the conversation `key` was at after its turn `turn` (as a reply recorded it), rebuilt from
 * the turns' rows: the last whole state at or before it, then what each reply changed since. Undefined
 * when that turn was never recorded. For audits and transcripts; a conversation goes on from
 * loadConversationState, which is one row.
 */
export async function loadConversationAt(
  db: Queryable,
  key: string,
  turn: number,
): Promise<ConversationState | undefined> {
  const { rows } = await db.query<{ turn: number; base: number | null; delta: unknown }>(
    `select turn, base, delta from ${SCHEMA}.conversation_turns
     where key = $1 and turn <= $2
       and turn >= (select coalesce(max(turn), 0) from ${SCHEMA}.conversation_turns
                    where key = $1 and turn <= $2 and base is null)
     order by turn`,
    [key, turn],
  );
  if (rows.at(-1)?.turn !== turn) return undefined;
  const source = conversationSource(key);
  let state: ConversationState | undefined;
  // Each reply's row follows the one before it, unless two processes wrote the conversation at once
  // without a lock: a row that follows another branch is not this turn's line and is passed over.
  for (const row of rows) {
    if (row.base === null) state = parseState(row.delta, source);
    else if (state?.steps === row.base) {
      try {
        state = applyDelta(state, row.delta);
      } catch (error) {
        throw new UserError(`${source}: turn ${row.turn} is damaged (${(error as Error).message})`, 2);
      }
    }
  }
  // A whole-state check, as a journal's replay makes: deltas are checked one by one.
  return state?.steps === turn ? parseState(state, source) : undefined;
}

/** How a stored conversation is named in messages. */
export function conversationSource(key: string): string {
  return `the conversation "${key}" in the database`;
}
