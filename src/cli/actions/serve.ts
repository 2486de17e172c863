/** What `meta-agent serve` does (declared in ../commands/serve.ts). */
import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { UserError } from '../../errors.js';
import { isFlowPath, openFlow } from '../../flow/load.js';
import { loadKeys } from '../../serve/keys.js';
import { isLoopback } from '../../serve/loopback.js';
import type { Served } from '../../serve/served.js';
import { startServer } from '../../serve/server.js';
import type { RequestRecord } from '../../serve/app.js';
import { fileStore } from '../../store/files.js';
import { openGraph, formatFinding } from '../load-graph.js';
import { resolveModels } from '../open-agent.js';
import type { GoalLoopOptionValues, ModelOptionValues } from '../options.js';
import { writeErr, writeOut } from '../terminal.js';

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
}

const LOG_FORMATS = ['text', 'json', 'none'];

/** A conversation left alone this long is closed, and opened from the store again when it is needed. */
const IDLE_MS = 15 * 60 * 1000;

/** Messages that may wait behind a turn in progress in one conversation. */
const MAX_WAITING = 8;

export async function runServe(paths: string[], options: ServeOptions): Promise<void> {
  if (!LOG_FORMATS.includes(options.logFormat))
    throw new UserError(`--log-format: expected ${LOG_FORMATS.join(', ')}, got "${options.logFormat}"`, 2);
  const keys = await loadKeys(process.env, options.apiKeys);
  if (!keys && !isLoopback(options.host))
    throw new UserError(
      `--host ${options.host}: a server others can reach needs API keys, and none were given`,
      2,
      'set META_AGENT_API_KEYS=KEY1,KEY2 or pass --api-keys FILE (one SHA-256 digest of a key per line)',
    );
  const served = await loadServed(paths, options);
  if (served.some((item) => item.models.chatbot.answersFrom === 'rules'))
    writeErr(`[scripted] the answers come from the rules in ${options.script}, not from a model\n`);
  const data = resolve(options.data);
  for (const folder of ['conversations', 'flow-runs'])
    await mkdir(join(data, folder), { recursive: true, mode: 0o700 }).catch((error: unknown) => {
      throw new UserError(
        `--data: cannot make ${data}/${folder} (${(error as NodeJS.ErrnoException).code})`,
        2,
      );
    });
  const log = requestLog(options.logFormat);
  const server = await startServer({
    served,
    store: fileStore(data),
    conversationKey: (id) => join(data, 'conversations', `${id}.state.json`),
    flowRunKey: (id) => join(data, 'flow-runs', `${id}.flow-run.json`),
    goalLoop: {
      workspace: options.workspace ?? 'workspace',
      ...(options.allow && { allow: options.allow }),
      ...(options.yes && { yes: true }),
      ...(options.goalMaxSteps !== undefined && { maxSteps: options.goalMaxSteps }),
    },
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
    onProblem: (message) => writeErr(`problem: ${message}\n`),
  }).catch((error: unknown) => {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL')
      throw new UserError(
        `cannot listen on ${options.host}:${options.port} (${code})`,
        2,
        'pick another --port, or --port 0 for any free one',
      );
    throw error;
  });
  writeOut(`listening on ${server.url}\n`);
  const signal = await stopSignal();
  writeErr(`stopping: letting the turns in flight finish (at most ${options.grace}s)\n`);
  await server.shutdown(options.grace * 1000);
  process.exitCode = signal === 'SIGINT' ? 130 : 0;
}

/** Each file, loaded and checked, under its graph's (or flow's) name, which must be unique. */
async function loadServed(paths: string[], options: ServeOptions): Promise<Served[]> {
  const served: Served[] = [];
  for (const path of paths) {
    const folder = dirname(resolve(path));
    if (isFlowPath(path)) {
      const { flow, warnings } = await openFlow(path);
      for (const warning of warnings) writeErr(`warning: ${formatFinding(warning, '(flow)')}\n`);
      const models = await resolveModels(
        options,
        { chatbot: flow.config.models.chatbot },
        'fetch-on-first-call',
        'flow',
      );
      served.push({ kind: 'flow', name: flow.name, flow, models, folder });
    } else {
      const { file } = await openGraph(path);
      const models = await resolveModels(options, file.config.models, 'fetch-on-first-call');
      served.push({ kind: 'agent', name: file.name, file, models, folder });
    }
    const name = served.at(-1)!.name;
    if (served.filter((item) => item.name === name).length > 1)
      throw new UserError(
        `two of the files are named "${name}"; a served graph is called by its name`,
        2,
        'rename one (its "name" field)',
      );
  }
  return served;
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

/** Resolves with the signal that asks the server to stop: SIGTERM or SIGINT (Ctrl+C). */
function stopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      // A second signal while the turns finish ends the process at once.
      process.once('SIGTERM', () => process.exit(0));
      process.once('SIGINT', () => process.exit(130));
      resolve(signal);
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}
