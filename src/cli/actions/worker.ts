/** What `meta-agent worker` does (declared in ../commands/worker.ts). */
import { QUEUES } from '../../durable/queues.js';
import { UserError } from '../../errors.js';
import { ConversationHub } from '../../serve/conversations.js';
import { servedWorld } from '../../serve/serve-context.js';
import { DATABASE_ENV } from '../../postgres/database.js';
import { databaseUrl } from '../database.js';
import { mcpServersFor } from '../mcp-setup.js';
import type { GoalLoopOptionValues, ModelOptionValues } from '../options.js';
import { loadServed, servedGoalLoop } from '../served-graphs.js';
import { stopSignal } from '../stop-signal.js';
import { writeErr, writeOut } from '../terminal.js';
import { openTurnServing } from '../turn-serving.js';

/** `worker`'s options as commander parses them. */
export interface WorkerOptions extends ModelOptionValues, GoalLoopOptionValues {
  database?: string;
  grace: number;
}

/** A conversation whose turns stopped coming here is let go after this long. */
const IDLE_MS = 5 * 60 * 1000;

export async function runWorker(paths: string[], options: WorkerOptions): Promise<void> {
  const url = databaseUrl(options.database);
  if (url === undefined)
    throw new UserError(
      'a worker takes its work from a database, and none was named',
      2,
      `pass --database postgres://USER:PASSWORD@HOST/DB, or set ${DATABASE_ENV}`,
    );
  const served = await loadServed(paths, options);
  if (served.some((item) => item.models.chatbot.answersFrom === 'rules'))
    writeErr(`[scripted] the answers come from the rules in ${options.script}, not from a model\n`);
  const onProblem = (message: string) => writeErr(`problem: ${message}\n`);
  const mcp = await mcpServersFor(options);
  const serving = await openTurnServing(url, { maxRunning: 0, onProblem, ...(mcp && { mcp }) });
  const hub = new ConversationHub({
    store: serving.store,
    agents: new Map(served.flatMap((item) => (item.kind === 'agent' ? [[item.name, item] as const] : []))),
    world: servedWorld({ goalLoop: servedGoalLoop(options), ...(mcp && { mcp }), onProblem }),
    keyOf: serving.keyOf,
    // A worker's turns come from the queue, one at a time per conversation: none wait here.
    maxWaiting: 0,
    idleMs: IDLE_MS,
    durable: serving.turns,
  });
  const durable = await serving.launch('worker', hub).catch(async (error: unknown) => {
    await serving.close();
    throw error;
  });
  // Listened for before the line is out: whoever waits for the line may signal at once.
  const stop = stopSignal();
  writeOut(`worker ${durable.executorId} taking work from ${Object.keys(QUEUES).join(', ')}\n`);
  const signal = await stop;
  writeErr(`stopping: taking no more work, letting what runs finish (at most ${options.grace}s)\n`);
  await durable.shutdown(options.grace * 1000);
  await hub.close(0);
  await serving.close();
  await mcp?.close();
  process.exitCode = signal === 'SIGINT' ? 130 : 0;
}
