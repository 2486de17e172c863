import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { newRunState, type RunState } from '../../src/autonomous/run-state.js';
import { Conversation } from '../../src/engine/conversation.js';
import { Interpreter } from '../../src/engine/interpreter.js';
import { EventBus } from '../../src/events.js';
import { openFlow } from '../../src/flow/load.js';
import { newFlowRunState, type FlowRunState } from '../../src/flow/run-state.js';
import { openDatabase, type Database } from '../../src/postgres/database.js';
import type { CatalogEntry } from '../../src/store/catalog.js';
import { fileStore } from '../../src/store/files.js';
import { DuplicateWrite, inMemoryStore } from '../../src/store/in-memory.js';
import { postgresStore } from '../../src/store/postgres.js';
import type { Store } from '../../src/store/store.js';
import { graphOf, noModels } from '../support/agents.js';
import { freshDatabase } from '../support/postgres.js';

// The same behaviours against every store: what a caller may rely on whichever one it is given. The
// files keep no unique keys (a file is replaced whole), so only the others are asked to refuse.

const root = new URL('../../', import.meta.url).pathname;
const folders: string[] = [];
const databases: Database[] = [];

afterAll(async () => {
  await Promise.all(databases.map((db) => db.close()));
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
});

interface Subject {
  store: Store;
  /** A conversation's or flow run's key in this store. */
  key(name: string): string;
  /** Whether it refuses a different value under a unique key it holds. */
  unique: boolean;
  workspace: string;
}

async function folder(): Promise<string> {
  const made = await mkdtemp(join(tmpdir(), 'meta-agent-contract-'));
  folders.push(made);
  return made;
}

const subjects: Array<[string, () => Promise<Subject>]> = [
  [
    'in memory',
    async () => ({ store: inMemoryStore(), key: (name) => name, unique: true, workspace: await folder() }),
  ],
  [
    'files',
    async () => {
      const dir = await folder();
      return {
        store: fileStore(join(dir, '.meta-agent')),
        key: (name) => join(dir, `${name}.json`),
        unique: false,
        workspace: join(dir, 'ws'),
      };
    },
  ],
  [
    'postgres',
    async () => {
      const db = await openDatabase(await freshDatabase());
      databases.push(db);
      return {
        store: postgresStore(db, { claimant: 'test' }),
        key: (name) => name,
        unique: true,
        workspace: await folder(),
      };
    },
  ],
];

const graph = graphOf([
  { name: 'hello', action: 'chat_exact', instruction: 'Hello.', transitions: ['again'] },
  { name: 'again', action: 'chat_exact', instruction: 'Go on.', transitions: ['again'] },
]);

async function talk(store: Store, key: string, replies: (string | undefined)[]) {
  const interpreter = await Interpreter.create({ graph, models: noModels, events: new EventBus() });
  try {
    const chat = new Conversation(interpreter, await store.conversations.load(key), {
      store: store.conversations,
      key,
    });
    for (const text of replies) await chat.reply(text);
    return chat.state!;
  } finally {
    interpreter.dispose();
  }
}

function runOf(workspace: string): RunState {
  return newRunState({
    name: 'Writer',
    role: 'writes',
    goals: ['write'],
    workspace,
    budget: { maxSteps: 5 },
  });
}

const thoughts = { text: 't', reasoning: 'r', plan: 'p', criticism: 'c', speak: 's' };

function withCommand(state: RunState, output: string): RunState {
  return {
    ...state,
    history: [
      ...state.history,
      // In another order than the schema's, as a process builds it.
      {
        output,
        files: [],
        ok: true,
        command: { name: 'write_to_file', args: { path: 'a' } },
        thoughts,
        step: 1,
        kind: 'command',
      },
    ],
  };
}

describe.each(subjects)('the store (%s)', (_name, open) => {
  it('continues a conversation saved in another of its objects, and a new key has none', async () => {
    const { store, key } = await open();
    expect(await store.conversations.load(key('none'))).toBeUndefined();
    await talk(store, key('c'), [undefined, 'one', 'two']);
    const state = await talk(store, key('c'), ['three']);
    const loaded = await store.conversations.load(key('c'));
    expect(loaded).toEqual(state);
    const said = loaded!.stack[0]!.turns.map((turn) => turn.userReply);
    expect(said).toEqual(['', 'one', 'two', 'three']);
  });

  it('takes the same state again as a harmless repeat, and refuses another under the same turn', async () => {
    const { store, key, unique } = await open();
    const state = await talk(store, key('c'), [undefined, 'one']);
    await store.conversations.save(key('c'), state);
    expect(await store.conversations.load(key('c'))).toEqual(state);
    const other = store.conversations.save(key('c'), { ...state, pendingUser: 'changed' });
    if (unique) {
      await expect(other).rejects.toThrow(DuplicateWrite);
      expect(await store.conversations.load(key('c'))).toEqual(state);
    } else await other;
  });

  it("keeps a goal run's command result once, and loads what it saved", async () => {
    const { store, unique, workspace } = await open();
    const state = runOf(workspace);
    const key = await store.goalRuns.create(state, ['Writer']);
    const done = withCommand(state, 'wrote a');
    await store.goalRuns.save(key, done);
    await store.goalRuns.save(key, done);
    expect(await store.goalRuns.load(key)).toMatchObject({ id: state.id, history: [{ output: 'wrote a' }] });
    const other = store.goalRuns.save(key, withCommand(state, 'wrote b'));
    if (unique) await expect(other).rejects.toThrow(DuplicateWrite);
    else await other;
  });

  it('takes a goal run read back and saved again, whatever order its keys were first written in', async () => {
    const { store, workspace } = await open();
    const state = runOf(workspace);
    const key = await store.goalRuns.create(state, ['Writer']);
    // As the goal loop settles a command: its result's fields first.
    const command = { name: 'write_to_file', args: { path: 'a' } };
    const entry = {
      kind: 'command' as const,
      ok: true,
      output: 'wrote a',
      files: [],
      step: 1,
      thoughts,
      command,
    };
    await store.goalRuns.save(key, { ...state, history: [entry] });
    const loaded = await store.goalRuns.load(key);
    await store.goalRuns.save(key, loaded);
    expect(await store.goalRuns.load(key)).toEqual(loaded);
  });

  it('refuses to load a goal run it does not hold, saying so', async () => {
    const { store, key } = await open();
    await expect(store.goalRuns.load(key('nothing'))).rejects.toThrow(/no goal run|cannot read the run/);
  });

  it("keeps a flow node's committed result once, and another flow's run is refused", async () => {
    const { store, key, unique } = await open();
    const { flow } = await openFlow(join(root, 'examples/plan-task.flow.json'));
    expect(await store.flowRuns.load(key('f'), flow)).toBeUndefined();
    const state = newFlowRunState(flow);
    const committed = (output: string): FlowRunState => ({
      ...state,
      current: {
        pass: 1,
        inputs: {},
        steps: 1,
        results: { plan: { status: 'done', output, prompt: 'Plan.', tokens: 3, attempts: 1 } },
        changes: [],
        startedAt: '2026-01-01T00:00:00.000Z',
      },
    });
    await store.flowRuns.save(key('f'), committed('one'));
    await store.flowRuns.save(key('f'), committed('one'));
    expect(await store.flowRuns.load(key('f'), flow)).toEqual(committed('one'));
    const other = store.flowRuns.save(key('f'), committed('two'));
    if (unique) await expect(other).rejects.toThrow(DuplicateWrite);
    else await other;
    await expect(store.flowRuns.load(key('f'), { ...flow, name: 'another' })).rejects.toThrow(
      /holds a run of the flow "plan-task"/,
    );
  });

  it('finds catalog entries by id, by owner (latest first) and by the history a client saw', async () => {
    const { store } = await open();
    const entry = (id: string, owner: string, updated: string, history?: string): CatalogEntry => ({
      id,
      graph: 'tutor',
      owner,
      created: '2026-01-01T00:00:00.000Z',
      updated,
      ...(history !== undefined && { history }),
    });
    expect(await store.catalog.get('a')).toBeUndefined();
    await store.catalog.put(entry('a', 'ann', '2026-01-01T00:00:01.000Z', 'h1'));
    await store.catalog.put(entry('b', 'ann', '2026-01-01T00:00:03.000Z', 'h1'));
    await store.catalog.put(entry('c', 'bob', '2026-01-01T00:00:02.000Z'));
    await store.catalog.put(entry('a', 'ann', '2026-01-01T00:00:04.000Z', 'h2'));
    expect(await store.catalog.get('c')).toEqual(entry('c', 'bob', '2026-01-01T00:00:02.000Z'));
    expect((await store.catalog.list('ann')).map((each) => each.id)).toEqual(['a', 'b']);
    expect(await store.catalog.byHistory('ann', 'h1')).toBe('b');
    expect(await store.catalog.byHistory('ann', 'h2')).toBe('a');
    expect(await store.catalog.byHistory('bob', 'h1')).toBeUndefined();
  });
});
