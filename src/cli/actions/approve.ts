/** What `meta-agent approve` does (declared in ../commands/approve.ts). */
import { DBOSClient } from '@dbos-inc/dbos-sdk';
import { answerQuestion } from '../../durable/approvals.js';
import { UserError } from '../../errors.js';
import { openDatabase } from '../../postgres/database.js';
import { databaseUrl } from '../database.js';
import { writeOut } from '../terminal.js';

export interface ApproveOptions {
  database?: string;
}

export async function approveRun(run: string, answer: string, options: ApproveOptions): Promise<void> {
  const url = databaseUrl(options.database);
  if (url === undefined)
    throw new UserError(
      'approve answers runs kept in PostgreSQL: name the database',
      2,
      'pass --database postgres://… or set META_AGENT_DATABASE_URL (a run in a terminal is answered there)',
    );
  // One round trip first, for a one-line message when the server cannot be used.
  const db = await openDatabase(url, { poolSize: 1 });
  await db.close();
  const client = await DBOSClient.create({ systemDatabaseUrl: url, systemDatabasePoolSize: 2 });
  try {
    const outcome = await answerQuestion(client, run, answer).catch((error: unknown) => {
      // A database no durable process ever used has no DBOS tables: it holds no runs either.
      if ((error as { code?: string }).code === '42P01') return { kind: 'unknown' as const };
      throw error;
    });
    switch (outcome.kind) {
      case 'sent':
        writeOut(`answered step ${outcome.step} of run ${run}: ${answer}\n`);
        return;
      case 'not-waiting':
        throw new UserError(`run ${run} is not waiting for an answer now`, 1);
      case 'unknown': {
        const started = await client
          .listWorkflows({ workflow_id_prefix: `goal:${run}`, limit: 1, loadInput: false, loadOutput: false })
          .catch(() => []);
        if (started.length > 0) throw new UserError(`run ${run} is not waiting for an answer now`, 1);
        throw new UserError(
          `there is no run ${run} in ${db.shown}`,
          2,
          'pass the id `meta-agent run --database … --queue` printed',
        );
      }
    }
  } finally {
    await client.destroy();
  }
}
