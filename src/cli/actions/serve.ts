/** What `meta-agent serve` does (declared in ../commands/serve.ts). */
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Durable } from '../../durable/runtime.js';
import { QUEUES } from '../../durable/queues.js';
import { UserError } from '../../errors.js';
import type { RequestRecord } from '../../serve/app.js';
import { loadKeys } from '../../serve/keys.js';
import { isLoopback } from '../../serve/loopback.js';
import { offeredTools } from '../../serve/mcp/tools.js';
import { startServer } from '../../serve/server.js';
import { fileStore } from '../../store/files.js';
import { databaseUrl } from '../database.js';
import { mcpServersFor } from '../mcp-setup.js';
import { resolveModels } from '../open-agent.js';
import type { GoalLoopOptionValues, ModelOptionValues } from '../options.js';
import { loadServed, servedGoalLoop } from '../served-graphs.js';
import { stopSignal } from '../stop-signal.js';
import { writeErr, writeOut } from '../terminal.js';
import { openTurnServing } from '../turn-serving.js';

/** `serve`'s options as commander parses them. */
export interface ServeOptions extends ModelOptionValues, GoalLoopOptionValues {
  host: string;
  port: number;
  apiKeys?: string;
  data: string;
  maxBody: number;
  deadline: number;
  grace: number;
  logFormat: string;
  database?: string;
  maxRunning: number;
}

const LOG_FORMATS = ['text', 'json', 'none'];

/** A conversation left alone this long is closed, and opened from the store again when it is needed. */
const IDLE_MS = 15 * 60 * 1000;

/** Messages that may wait behind a turn in progress in one conversation. */
const MAX_WAITING = 8;

export async function runServe(paths: string[], options: ServeOptions): Promise<void> {
  if (!LOG_FORMATS.includes(options.logFormat))
    throw new UserError(`--log-format: expected ${LOG_FORMATS.join(', ')}, got "${options.logFormat}"`, 2);
  const url = databaseUrl(options.database);
  const keys = await loadKeys(process.env, options.apiKeys);
  if (!keys && !isLoopback(options.host))
    throw new UserError(
      `--host ${options.host}: a server others can reach needs API keys, and none were given`,
      2,
      'set META_AGENT_API_KEYS=KEY1,KEY2 or pass --api-keys FILE (one SHA-256 digest of a key per line)',
    );
  const served = await loadServed(paths, options);
  for (const line of offeredTools(served).renamed) writeErr(`warning: /mcp: ${line}\n`);
  if (served.some((item) => item.models.chatbot.answersFrom === 'rules'))
    writeErr(`[scripted] the answers come from the rules in ${options.script}, not from a model\n`);
  const onProblem = (message: string) => writeErr(`problem: ${message}\n`);
  const mcp = await mcpServersFor(options);
  const serving =
    url === undefined
      ? undefined
      : await openTurnServing(url, { ...options, onProblem, ...(mcp && { mcp }) });
  const data = resolve(options.data);
  if (!serving) await makeDataFolders(data);
  const log = requestLog(options.logFormat);
  let durable: Durable | undefined;
  const server = await startServer({
    served,
    store: serving?.store ?? fileStore(data),
    conversationKey: serving?.keyOf ?? ((id) => join(data, 'conversations', `${id}.state.json`)),
    flowRunKey: serving ? (id) => `serve-flow:${id}` : (id) => join(data, 'flow-runs', `${id}.flow-run.json`),
    goalLoop: servedGoalLoop(options),
    ...(mcp && { mcp }),
    models: await resolveModels(options, undefined, 'fetch-on-first-call'),
    limits: {
      maxBodyBytes: options.maxBody,
      deadlineMs: options.deadline * 1000,
      maxWaiting: MAX_WAITING,
      idleMs: IDLE_MS,
    },
    host: options.host,
    port: options.port,
    loopback: isLoopback(options.host),
    ...(keys && { keys }),
    ...(log && { log }),
    onProblem,
    ...(serving && {
      durable: true,
      turns: serving.turns,
      beforeListen: async (ctx) => {
        durable = await serving.launch('serve', ctx.hub, queuesOf(options.maxRunning));
      },
    }),
  }).catch(async (error: unknown) => {
    await durable?.shutdown();
    await serving?.close();
    await mcp?.close();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL')
      throw new UserError(
        `cannot listen on ${options.host}:${options.port} (${code})`,
        2,
        'pick another --port, or --port 0 for any free one',
      );
    throw error;
  });
  // Listened for before the line is out: whoever waits for the line may signal at once.
  const stop = stopSignal();
  writeOut(`listening on ${server.url}\n`);
  const signal = await stop;
  writeErr(`stopping: letting the turns in flight finish (at most ${options.grace}s)\n`);
  const deadline = Date.now() + options.grace * 1000;
  await server.shutdown(options.grace * 1000);
  await durable?.shutdown(Math.max(0, deadline - Date.now()));
  await serving?.close();
  await mcp?.close();
  process.exitCode = signal === 'SIGINT' ? 130 : 0;
}

/**
 * The queues a server takes work from: all, but the turns' when it runs none itself (--max-running 0),
 * which leaves them to the workers.
 */
function queuesOf(maxRunning: number): string[] | undefined {
  return maxRunning > 0 ? undefined : Object.keys(QUEUES).filter((name) => name !== 'turns');
}

/** The folders of --data the files need. */
export async function makeDataFolders(data: string): Promise<void> {
  for (const folder of ['conversations', 'flow-runs'])
    await mkdir(join(data, folder), { recursive: true, mode: 0o700 }).catch((error: unknown) => {
      throw new UserError(
        `--data: cannot make ${data}/${folder} (${(error as NodeJS.ErrnoException).code})`,
        2,
      );
    });
}

function requestLog(format: string): ((record: RequestRecord) => void) | undefined {
  if (format === 'none') return undefined;
  if (format === 'json')
    return (record) => writeErr(`${JSON.stringify({ time: new Date().toISOString(), ...record })}\n`);
  return (record) =>
    writeErr(
      `${record.method} ${record.path} ${record.status} ${record.ms}ms${record.conversation ? ` ${record.conversation}` : ''}\n`,
    );
}
