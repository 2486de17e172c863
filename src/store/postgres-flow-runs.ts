/**
 * Flow runs in Postgres: a run's state as one row, replaced after every step of its pass, with each
 * node's committed result recorded under (run, pass, node) once beside it (flow_run_results), so a
 * pass that two processes run, or one runs again, cannot commit a node twice with different results.
 */
import { parseFlowRun, type FlowRunState } from '../flow/run-state.js';
import type { FlowFile } from '../flow/schema.js';
import { SCHEMA } from '../postgres/database.js';
import { recordUnique, type Queryable } from './postgres-sql.js';

/** The run of `flow` saved under `key`, checked; undefined when there is none. Another flow's is refused. */
export async function loadFlowRunState(
  db: Queryable,
  key: string,
  flow: FlowFile,
): Promise<FlowRunState | undefined> {
  const { rows } = await db.query<{ state: unknown }>(
    `select state from ${SCHEMA}.flow_runs where key = $1`,
    [key],
  );
  return rows[0] === undefined
    ? undefined
    : parseFlowRun(rows[0].state, flow, `the flow run "${key}" in the database`);
}

/**
 * Records the run `key` after a step of its pass: the current pass's committed results are kept unique
 * (DuplicateWrite), then the run's state is replaced. Run it inside inTransaction so that a refused save
 * changes nothing.
 */
export async function saveFlowRunState(db: Queryable, key: string, state: FlowRunState): Promise<void> {
  const { current } = state;
  await recordUnique(
    db,
    'flow_run_results',
    ['pass', 'node'],
    'flow-run',
    key,
    Object.entries(current?.results ?? {}).map(([node, result]) => ({
      columns: [current!.pass, node],
      name: `pass ${current!.pass} ${node}`,
      value: result,
    })),
  );
  await db.query(
    `insert into ${SCHEMA}.flow_runs (key, state) values ($1, $2)
     on conflict (key) do update set state = excluded.state, updated_at = now()`,
    [key, JSON.stringify(state)],
  );
}
