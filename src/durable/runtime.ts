/**
 * The durable runtime: DBOS Transact on the database meta-agent keeps its store in. Every process that
 * takes durable work (a `serve`, a `worker`, a CLI command that runs on Postgres) launches it once, with
 *
 * - the application version pinned to meta-agent's own, not DBOS's default hash of the registered code,
 *   so two processes of the same release take each other's work however they were built;
 * - an executor id of its own, announced in a heartbeat (`meta_agent.executors`);
 * - a reaper: DBOS alone recovers a dead process's workflows only when a process with the same
 *   executor id starts again, so every process looks for executors whose heartbeat stopped and puts
 *   their unfinished workflows back on their queues, where a live process takes them.
 *
 * Workflows are registered by the modules that define them, at import, before `launchDurable`.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { DBOS, type DLogger } from '@dbos-inc/dbos-sdk';
import { migrate, SCHEMA, type Database } from '../postgres/database.js';
import { isProcessAlive } from '../process-alive.js';
import type { Queryable } from '../store/postgres-sql.js';
import { QUEUES } from './queues.js';

/** How often a process says it is alive. */
export const HEARTBEAT_MS = 2_000;
/** A process silent this long is taken for dead, and its work is resumed elsewhere. */
export const DEAD_AFTER_MS = 10_000;

const MIGRATIONS = [
  `create table ${SCHEMA}.executors (
     id text primary key,
     role text not null,
     host text not null,
     pid int not null,
     started_at timestamptz not null default now(),
     beat_at timestamptz not null default now()
   )`,
];

export interface DurableOptions {
  db: Database;
  /** The database's URL (DBOS opens its own pool on it). */
  url: string;
  /** What this process is, for `meta_agent.executors`: serve, worker, run, flow, simulate… */
  role: string;
  /** meta-agent's version: workflows are taken only by processes of the same one. */
  version: string;
  /** Default: newExecutorId(role). */
  executorId?: string;
  /** Only these queues are taken from (a CLI command takes none but its own); default all. */
  listen?: readonly string[];
  /** Told of a reaper's or heartbeat's failure (a lost connection); the process goes on. */
  onProblem?: (message: string) => void;
}

export interface Durable {
  readonly executorId: string;
  /**
   * Stops taking work, waits up to `graceMs` for what runs here, and closes DBOS. What is still
   * unfinished then is left to the reaper of a live process, at once rather than after DEAD_AFTER_MS.
   */
  shutdown(graceMs?: number): Promise<void>;
}

/** A new executor id: role, host, pid and a random part, so a restarted process is a new executor. */
export function newExecutorId(role: string): string {
  return `${role}-${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

/** Launches DBOS once in this process. */
export async function launchDurable(options: DurableOptions): Promise<Durable> {
  const { db, url, role, version } = options;
  const executorId = options.executorId ?? newExecutorId(role);
  await migrate(db, 'durable', MIGRATIONS);
  DBOS.setConfig({
    name: 'meta-agent',
    systemDatabaseUrl: url,
    applicationVersion: version,
    executorID: executorId,
    logger: quietLogger(options.onProblem),
    ...(options.listen && { listenQueues: [...options.listen] }),
  });
  await oneAtATime(db, 'meta_agent.dbos_launch', () => DBOS.launch()).catch(async (error: unknown) => {
    // What it opened before failing would hold the process open.
    await DBOS.shutdown().catch(() => undefined);
    throw error;
  });
  for (const [name, settings] of Object.entries(QUEUES))
    await DBOS.registerQueue(name, { ...settings, onConflict: 'always_update' });
  const beat = () =>
    db.pool.query(
      `insert into ${SCHEMA}.executors (id, role, host, pid) values ($1, $2, $3, $4)
       on conflict (id) do update set beat_at = now()`,
      [executorId, role, hostname(), process.pid],
    );
  await beat();
  const problem = (error: unknown) =>
    options.onProblem?.(`durable runtime: ${error instanceof Error ? error.message : String(error)}`);
  const heartbeat = setInterval(() => void beat().catch(problem), HEARTBEAT_MS);
  const reaper = setInterval(() => void reap(db, executorId).catch(problem), HEARTBEAT_MS);
  heartbeat.unref();
  reaper.unref();
  return {
    executorId,
    async shutdown(graceMs = 0) {
      clearInterval(heartbeat);
      clearInterval(reaper);
      await DBOS.shutdown({ workflowCompletionTimeoutMS: graceMs });
      // Its heartbeat stopped long ago, as far as a reaper can tell: one resumes what is left (and
      // deletes the row). Deleting the row here would orphan a workflow still pending under this id.
      await db.pool
        .query(`update ${SCHEMA}.executors set beat_at = 'epoch' where id = $1`, [executorId])
        .catch(() => undefined);
    },
  };
}

/**
 * Runs `work` while holding the advisory lock `name`: DBOS migrates its own schema at launch, and two
 * processes launching at once on a new database would both try (a duplicate key in dbos_migrations).
 * The lock is tried rather than waited for: a statement waiting on it would be a transaction that
 * DBOS's `create index concurrently` waits for in turn, while the holder waits for the index.
 */
async function oneAtATime<T>(db: Database, name: string, work: () => Promise<T>): Promise<T> {
  const client = await db.pool.connect();
  try {
    for (;;) {
      const { rows } = await client.query<{ held: boolean }>(
        `select pg_try_advisory_lock(hashtext($1)) as held`,
        [name],
      );
      if (rows[0]?.held) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    try {
      return await work();
    } finally {
      await client.query(`select pg_advisory_unlock(hashtext($1))`, [name]);
    }
  } finally {
    client.release();
  }
}

/**
 * Puts the unfinished workflows of executors whose heartbeat stopped back on their queues. Each dead
 * executor is taken by one reaper (its row locked, then deleted in the same transaction), so its work
 * is resumed once.
 */
export async function reap(db: Database, self: string): Promise<string[]> {
  const client = await db.pool.connect();
  const resumed: string[] = [];
  try {
    await client.query('begin');
    const dead = await deadExecutors(client, self);
    // Locked, and taken by this reaper only when no other holds it: each dead executor is reaped once.
    const { rows } = await client.query<{ id: string }>(
      `select id from ${SCHEMA}.executors where id = any($1) for update skip locked`,
      [dead],
    );
    for (const { id } of rows) {
      const pending = await DBOS.listWorkflows({
        executorId: id,
        status: 'PENDING',
        loadInput: false,
        loadOutput: false,
      });
      const byQueue = new Map<string | undefined, string[]>();
      for (const workflow of pending) {
        const ids = byQueue.get(workflow.queueName) ?? [];
        ids.push(workflow.workflowID);
        byQueue.set(workflow.queueName, ids);
      }
      for (const [queueName, ids] of byQueue) {
        await DBOS.resumeWorkflows(ids, queueName === undefined ? {} : { queueName });
        resumed.push(...ids);
      }
      await client.query(`delete from ${SCHEMA}.executors where id = $1`, [id]);
    }
    await client.query('commit');
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
  return resumed;
}

/** DBOS's own log is for its operators: warnings and errors go to `onProblem`, the rest nowhere. */
function quietLogger(onProblem: ((message: string) => void) | undefined): DLogger {
  const drop = () => {};
  const tell = (message: unknown) => onProblem?.(`dbos: ${String(message)}`);
  return { debug: drop, info: drop, warn: tell, error: tell };
}

/** Whether the executor `id` still runs: it beat lately, and, when it is on this host, its process is there. */
export async function executorAlive(db: Queryable, id: string): Promise<boolean> {
  return !(await deadExecutors(db, '', [id])).includes(id);
}

/**
 * The executors, other than `self` (of `among` when given), that are gone: silent for DEAD_AFTER_MS, or
 * on this host with no process of their pid (found at once after a kill -9, without waiting for the
 * silence). A row missing is an executor that is gone too, for `among`.
 */
async function deadExecutors(db: Queryable, self: string, among?: readonly string[]): Promise<string[]> {
  const { rows } = await db.query<{ id: string; host: string; pid: number; silent: boolean }>(
    `select id, host, pid, beat_at < now() - make_interval(secs => $2) as silent
       from ${SCHEMA}.executors where id <> $1 and ($3::text[] is null or id = any($3))`,
    [self, DEAD_AFTER_MS / 1000, among ?? null],
  );
  const here = hostname();
  const dead = rows
    .filter((row) => row.silent || (row.host === here && !isProcessAlive(row.pid)))
    .map((row) => row.id);
  const known = new Set(rows.map((row) => row.id));
  return [...dead, ...(among ?? []).filter((id) => !known.has(id))];
}
