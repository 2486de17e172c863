import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunState, type RunState } from '../../src/autonomous/run-state.js';
import { Conversation } from '../../src/engine/conversation.js';
import { Interpreter } from '../../src/engine/interpreter.js';
import type { ConversationState } from '../../src/engine/state.js';
import { InvalidFileError, UserError } from '../../src/errors.js';
import { EventBus } from '../../src/events.js';
import { openDatabase, type Database } from '../../src/postgres/database.js';
import { DuplicateWrite } from '../../src/store/in-memory.js';
import {
  ClaimHeld,
  inTransaction,
  loadConversationAt,
  postgresStore,
  putCatalogEntry,
  recordConversationState,
} from '../../src/store/postgres.js';
import type { Store } from '../../src/store/store.js';
import { graphOf, noModels } from '../support/agents.js';
import { freshDatabase } from '../support/postgres.js';

// What only a shared database adds to the store's contract (store-contract.test.ts): several processes
// on the same rows. Each "process" here is a store of its own on a pool of its own.

const databases: Database[] = [];
let url: string;

async function database(): Promise<Database> {
  const db = await openDatabase(url);
  databases.push(db);
  return db;
}

beforeAll(async () => {
  url = await freshDatabase();
});

afterAll(async () => {
  await Promise.all(databases.map((db) => db.close()));
});

const graph = graphOf([
  { name: 'hello', action: 'chat_exact', instruction: 'Hello.', transitions: ['again'] },
  { name: 'again', action: 'chat_exact', instruction: 'Go on.', transitions: ['again'] },
]);

/** Replies in the conversation `key` of `store`, from the state it holds or from `from`. */
async function talk(store: Store, key: string, replies: (string | undefined)[], from?: ConversationState) {
  const interpreter = await Interpreter.create({ graph, models: noModels, events: new EventBus() });
  try {
    const chat = new Conversation(interpreter, from ?? (await store.conversations.load(key)), {
      store: store.conversations,
      key,
    });
    for (const text of replies) await chat.reply(text);
    return chat.state!;
  } finally {
    interpreter.dispose();
  }
}

const thoughts = { text: 't', reasoning: 'r', plan: 'p', criticism: 'c', speak: 's' };

function running(state: RunState, step: number): RunState {
  return {
    ...state,
    pending: {
      step,
      thoughts,
      command: { name: 'execute_shell', args: { command: 'deploy' } },
      phase: 'running',
    },
  };
}

describe('the Postgres store, shared by several processes', () => {
  it('lets one claimant run a step: a second one is refused, naming the run and step', async () => {
    const first = postgresStore(await database(), { claimant: 'first' });
    const second = postgresStore(await database(), { claimant: 'second' });
    const state = newRunState({
      name: 'Ops',
      role: 'deploys',
      goals: ['deploy'],
      workspace: '/tmp/ws',
      budget: {},
    });
    const key = await first.goalRuns.create(state, ['Ops']);
    await first.goalRuns.save(key, running(state, 1));
    await first.goalRuns.save(key, running(state, 1));
    const refused = second.goalRuns.save(key, running(state, 1));
    await expect(refused).rejects.toBeInstanceOf(ClaimHeld);
    await expect(refused).rejects.toThrow(`goal run ${key}: step 1 is being run by another process (first)`);
    // The refused save changed nothing; the next step is anyone's.
    expect((await second.goalRuns.load(key)).pending).toMatchObject({ step: 1, phase: 'running' });
    await second.goalRuns.save(key, running(state, 2));
  });

  it('lets a process resume a run whose step was running in one that stopped, without running it', async () => {
    const crashed = postgresStore(await database(), { claimant: 'crashed' });
    const state = newRunState({
      name: 'Ops',
      role: 'deploys',
      goals: ['deploy'],
      workspace: '/tmp/ws',
      budget: {},
    });
    const key = await crashed.goalRuns.create(state, ['Ops']);
    await crashed.goalRuns.save(key, running(state, 1));
    const resumer = postgresStore(await database(), { claimant: 'resumer' });
    const loaded = await resumer.goalRuns.load(key);
    // The goal loop saves the run as it found it first, then records the step as interrupted.
    await resumer.goalRuns.save(key, loaded);
    await resumer.goalRuns.save(key, { ...loaded, pending: undefined });
    await resumer.goalRuns.save(key, running(loaded, 2));
  });

  it('lets only one of two claimants racing for the same step have it', async () => {
    const stores = await Promise.all(
      ['a', 'b', 'c', 'd'].map(async (claimant) => postgresStore(await database(), { claimant })),
    );
    const state = newRunState({
      name: 'Ops',
      role: 'deploys',
      goals: ['deploy'],
      workspace: '/tmp/ws',
      budget: {},
    });
    const key = await stores[0]!.goalRuns.create(state, ['Ops']);
    const results = await Promise.allSettled(
      stores.map((store) => store.goalRuns.save(key, running(state, 1))),
    );
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
  });

  it("shows each store the others' writes: conversations, goal runs and the catalog", async () => {
    const one = postgresStore(await database(), { claimant: 'one' });
    const two = postgresStore(await database(), { claimant: 'two' });
    await talk(one, 'shared', [undefined, 'first']);
    const state = await talk(two, 'shared', ['second']);
    expect(await one.conversations.load('shared')).toEqual(state);
    const entry = { id: 'shared', graph: 'test', owner: 'ann', created: 'c', updated: 'u', history: 'h' };
    await one.catalog.put(entry);
    expect(await two.catalog.get('shared')).toEqual(entry);
    expect(await two.catalog.byHistory('ann', 'h')).toBe('shared');
  });

  it('records a turn once when two processes save different states under it', async () => {
    const one = postgresStore(await database(), { claimant: 'one' });
    const two = postgresStore(await database(), { claimant: 'two' });
    const state = await talk(one, 'raced', [undefined]);
    const next = await talk(one, 'raced', ['mine']);
    const results = await Promise.allSettled([
      one.conversations.save('raced', next),
      two.conversations.save('raced', { ...next, pendingUser: 'theirs' }),
    ]);
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    const refused = results.find((result) => result.status === 'rejected');
    expect((refused as PromiseRejectedResult).reason).toBeInstanceOf(DuplicateWrite);
    expect((await two.conversations.load('raced'))!.steps).toBe(state.steps + 1);
  });

  it('stores what each reply changed, not the whole conversation again at every turn', async () => {
    const db = await database();
    const store = postgresStore(db, { claimant: 'one' });
    const replies = Array.from({ length: 40 }, (_, i) => `reply number ${i} ${'x'.repeat(200)}`);
    const state = await talk(store, 'long', [undefined, ...replies]);
    const { rows } = await db.pool.query<{ turn: number; size: number }>(
      `select turn, length(delta::text) as size from meta_agent.conversation_turns where key = 'long' order by turn`,
    );
    expect(rows).toHaveLength(replies.length + 1);
    expect(rows.at(-1)!.turn).toBe(state.steps);
    // The last reply's row is about as small as the second's, though the state holds 40 times as much.
    expect(rows.at(-1)!.size).toBeLessThan(rows[1]!.size * 2);
    expect(JSON.stringify(state).length).toBeGreaterThan(rows.at(-1)!.size * 10);
    // Nor is the conversation's whole state written again: it is the first turn's and the replies since.
    const { rows: held } = await db.pool.query(
      `select turn, snapshot_turn from meta_agent.conversations where key = 'long'`,
    );
    expect(held).toEqual([{ turn: state.steps, snapshot_turn: rows[0]!.turn }]);
    expect(await postgresStore(await database(), { claimant: 'x' }).conversations.load('long')).toEqual(
      state,
    );
  });

  it('folds the replies into a new whole state once they outgrow the last one, and loads the same', async () => {
    const db = await database();
    const store = postgresStore(db, { claimant: 'one' });
    const other = postgresStore(await database(), { claimant: 'two' });
    const snapshots = new Set<number>();
    let state: ConversationState | undefined;
    for (let i = 0; i < 30; i++) {
      state = await talk(store, 'folded', i === 0 ? [undefined] : [`${i} ${'z'.repeat(8000)}`]);
      expect(await other.conversations.load('folded')).toEqual(state);
      const { rows } = await db.pool.query(
        `select snapshot_turn from meta_agent.conversations where key = 'folded'`,
      );
      snapshots.add(rows[0]!.snapshot_turn as number);
    }
    expect(snapshots.size).toBeGreaterThan(2);
    expect(snapshots.size).toBeLessThan(15);
  });

  it('gives back the state of every turn, from what each reply changed', async () => {
    const db = await database();
    const one = postgresStore(db, { claimant: 'one' });
    const two = postgresStore(await database(), { claimant: 'two' });
    const saved = new Map<number, ConversationState>();
    const keep = (store: Store): Store => ({
      ...store,
      conversations: {
        load: (key) => store.conversations.load(key),
        save: async (key, state) => {
          await store.conversations.save(key, state);
          saved.set(state.steps, structuredClone(state));
        },
      },
    });
    // The second store goes on from a state it did not load itself: its first row holds the whole state.
    const before = await talk(keep(one), 'turns', [undefined, 'a', 'b']);
    await talk(keep(two), 'turns', ['c', 'd'], structuredClone(before));
    await talk(keep(one), 'turns', ['e']);
    const { rows } = await db.pool.query(
      `select base from meta_agent.conversation_turns where key = 'turns'`,
    );
    expect(rows.filter((row) => row.base === null)).toHaveLength(2);
    expect(saved.size).toBe(6);
    for (const [turn, state] of saved)
      expect(await loadConversationAt(db.pool, 'turns', turn)).toEqual(state);
    expect(await loadConversationAt(db.pool, 'turns', 999)).toBeUndefined();
    expect(await loadConversationAt(db.pool, 'nothing', 1)).toBeUndefined();
  });

  it("saves a turn's state and its catalog entry in one transaction, or neither", async () => {
    const db = await database();
    const store = postgresStore(db, { claimant: 'one' });
    const state = await talk(store, 'atomic', [undefined]);
    const next = await talk(postgresStore(await database(), { claimant: 'x' }), 'elsewhere', [
      undefined,
      'hi',
    ]);
    const entry = { id: 'atomic', graph: 'test', owner: 'ann', created: 'c', updated: 'u2' };
    await expect(
      inTransaction(db.pool, async (client) => {
        await recordConversationState(client, 'atomic', next);
        await putCatalogEntry(client, entry);
        throw new Error('the reply could not be recorded');
      }),
    ).rejects.toThrow('the reply could not be recorded');
    expect(await store.conversations.load('atomic')).toEqual(state);
    expect(await store.catalog.get('atomic')).toBeUndefined();
    await inTransaction(db.pool, async (client) => {
      expect(await recordConversationState(client, 'atomic', next)).toBe(true);
      await putCatalogEntry(client, entry);
    });
    expect(await store.conversations.load('atomic')).toEqual(next);
    expect(await store.catalog.get('atomic')).toEqual(entry);
    expect(await recordConversationState(db.pool, 'atomic', next)).toBe(false);
  });

  it('refuses a row that is not a state as a user error naming it, not a crash', async () => {
    const db = await database();
    const store = postgresStore(db, { claimant: 'one' });
    await talk(store, 'ready', [undefined]);
    await db.pool.query(
      `insert into meta_agent.conversations (key, turn, snapshot_turn, state, snapshot_bytes)
       values ('broken', 1, 1, '{"format":"nonsense"}', 22), ('torn', 9, 1, '{"format":"nonsense"}', 22)`,
    );
    await db.pool.query(`insert into meta_agent.goal_runs (key, state) values ('broken', '{"id":"zz"}')`);
    await db.pool.query(`insert into meta_agent.flow_runs (key, state) values ('broken', '[1, 2]')`);
    const conversation = store.conversations.load('broken');
    await expect(conversation).rejects.toBeInstanceOf(UserError);
    await expect(conversation).rejects.toThrow(
      /the conversation "broken" in the database is not a meta-agent/,
    );
    await expect(store.conversations.load('torn')).rejects.toThrow(
      /^the conversation "torn" in the database is damaged: the reply of turn 9 is missing$/,
    );
    await expect(store.goalRuns.load('broken')).rejects.toBeInstanceOf(InvalidFileError);
    const { openFlow } = await import('../../src/flow/load.js');
    const { flow } = await openFlow(new URL('../../examples/plan-task.flow.json', import.meta.url).pathname);
    await expect(store.flowRuns.load('broken', flow)).rejects.toBeInstanceOf(InvalidFileError);
  });
});
