import { DBOS } from '@dbos-inc/dbos-sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { launchDurable, reap, type Durable } from '../../src/durable/runtime.js';
import { openDatabase, SCHEMA } from '../../src/postgres/database.js';
import { freshDatabase } from '../support/postgres.js';

const double = DBOS.registerWorkflow(
  async (n: number) => DBOS.runStep(async () => n * 2, { name: 'double' }),
  {
    name: 'test.double',
  },
);

describe('the durable runtime', () => {
  let durable: Durable | undefined;
  afterAll(() => durable?.shutdown());

  it('runs workflows on its queues, pinned to the version given, once per id', async () => {
    const url = await freshDatabase();
    const db = await openDatabase(url);
    durable = await launchDurable({ db, url, role: 'test', version: '9.9.9' });
    const first = await DBOS.startWorkflow(double, { workflowID: 'same' })(21);
    expect(await first.getResult()).toBe(42);
    const again = await DBOS.startWorkflow(double, { workflowID: 'same' })(1000);
    expect(await again.getResult()).toBe(42);
    const queued = await DBOS.startWorkflow(double, {
      workflowID: 'queued',
      queueName: 'turns',
      enqueueOptions: { queuePartitionKey: 'conversation-1' },
    })(5);
    expect(await queued.getResult()).toBe(10);
    expect((await DBOS.getWorkflowStatus('same'))?.applicationVersion).toBe('9.9.9');

    // An executor that stopped beating: its pending workflow goes back on its queue, and runs here.
    await db.pool.query(
      `insert into ${SCHEMA}.executors (id, role, host, pid, beat_at) values ('gone', 'worker', 'elsewhere', 1, now() - interval '1 minute')`,
    );
    await db.pool.query(
      `update dbos.workflow_status set status = 'PENDING', executor_id = 'gone', output = null where workflow_uuid = 'queued'`,
    );
    expect(await reap(db, durable.executorId)).toEqual(['queued']);
    expect(await reap(db, durable.executorId)).toEqual([]);
    expect(await DBOS.retrieveWorkflow('queued').getResult()).toBe(10);
    const { rows } = await db.pool.query(`select id from ${SCHEMA}.executors`);
    expect(rows.map((row) => row.id)).toEqual([durable.executorId]);
  });
});
