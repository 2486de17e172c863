/**
 * Goal runs in Postgres: a run's state as one row, replaced at every phase of a step, with two kinds of
 * unique rows beside it. A command's result is recorded under (run, step) once (goal_run_steps), as the
 * run file keeps it. And the `running` phase of a step is a claim (goal_run_claims: run, step,
 * claimant): the first process to save a step as running holds it, and a save by any other claimant
 * that moves the same step to running is refused, so a command with a side effect runs in one process
 * only, even when two processes hold the same run.
 */
import { loadedRunState, type RunState } from '../autonomous/run-state.js';
import { UserError } from '../errors.js';
import { SCHEMA } from '../postgres/database.js';
import { recordUnique, type Queryable } from './postgres-sql.js';

/** A save that would run a step another process has claimed: the step must not run here. */
export class ClaimHeld extends UserError {
  constructor(
    readonly run: string,
    readonly step: number,
    readonly holder: string,
  ) {
    super(
      `goal run ${run}: step ${step} is being run by another process (${holder}), so it is not run here`,
      1,
      'let that process finish the run, or resume the run once it has stopped',
    );
  }
}

/** Makes the row of the new run `state`, keyed by its id; making it again is harmless. */
export async function createGoalRun(db: Queryable, state: RunState): Promise<string> {
  await db.query(
    `insert into ${SCHEMA}.goal_runs (key, state) values ($1, $2) on conflict (key) do nothing`,
    [state.id, JSON.stringify(state)],
  );
  return state.id;
}

/** The run saved under `key`, checked; a missing or unusable run is a UserError (exit 2). */
export async function loadGoalRun(db: Queryable, key: string): Promise<RunState> {
  const { rows } = await db.query<{ state: unknown }>(
    `select state from ${SCHEMA}.goal_runs where key = $1`,
    [key],
  );
  if (rows[0] === undefined)
    throw new UserError(
      `there is no goal run ${key} in the database`,
      2,
      'pass the key `meta-agent run` named when the run started',
    );
  return loadedRunState(rows[0].state, `the goal run "${key}" in the database`);
}

/**
 * Records the run `key` at a phase of its step, for `claimant` (this process): claims the pending step
 * when it is `running` (ClaimHeld when another claimant holds it), keeps every command's result unique
 * (DuplicateWrite), then replaces the run's state. `inherited` is the step of a run this process loaded
 * as running already (its command may have run, in a process that stopped): the goal loop never runs
 * such a step again, only records it as interrupted, so saving it as it was loaded claims nothing. Run
 * it inside inTransaction so that a refused save changes nothing.
 */
export async function saveGoalRun(
  db: Queryable,
  key: string,
  state: RunState,
  claimant: string,
  inherited?: number,
): Promise<void> {
  const { pending } = state;
  if (pending?.phase === 'running' && pending.step !== inherited)
    await claimStep(db, key, pending.step, claimant);
  await recordUnique(
    db,
    'goal_run_steps',
    ['step'],
    'goal-run',
    key,
    state.history.flatMap((entry) =>
      entry.kind === 'command' ? [{ columns: [entry.step], name: `step ${entry.step}`, value: entry }] : [],
    ),
  );
  await db.query(
    `insert into ${SCHEMA}.goal_runs (key, state) values ($1, $2)
     on conflict (key) do update set state = excluded.state, updated_at = now()`,
    [key, JSON.stringify(state)],
  );
}

/** Claims (run, step) for `claimant`, or throws ClaimHeld naming the claimant that holds it. */
export async function claimStep(db: Queryable, key: string, step: number, claimant: string): Promise<void> {
  const claimed = await db.query(
    `insert into ${SCHEMA}.goal_run_claims (key, step, claimant) values ($1, $2, $3)
     on conflict (key, step) do nothing`,
    [key, step, claimant],
  );
  if (claimed.rowCount === 1) return;
  // A statement of its own: it sees a claim that a concurrent transaction committed while the insert waited.
  const { rows } = await db.query<{ claimant: string }>(
    `select claimant from ${SCHEMA}.goal_run_claims where key = $1 and step = $2`,
    [key, step],
  );
  const holder = rows[0]?.claimant;
  if (holder !== claimant) throw new ClaimHeld(key, step, holder ?? 'a process');
}
