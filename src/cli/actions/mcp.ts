/** What `meta-agent mcp` does (declared in ../commands/mcp.ts). */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { UserError } from '../../errors.js';
import { mcpServer, mcpService } from '../../serve/mcp/server.js';
import { offeredTools } from '../../serve/mcp/tools.js';
import { serveContext } from '../../serve/serve-context.js';
import { fileStore } from '../../store/files.js';
import { mcpServersFor } from '../mcp-setup.js';
import { resolveModels } from '../open-agent.js';
import type { GoalLoopOptionValues, ModelOptionValues } from '../options.js';
import { loadServed, servedGoalLoop } from '../served-graphs.js';
import { stopSignal } from '../stop-signal.js';
import { writeErr } from '../terminal.js';
import { makeDataFolders } from './serve.js';

/** `mcp`'s options as commander parses them. */
export interface McpOptions extends ModelOptionValues, GoalLoopOptionValues {
  data?: string;
}

/** How long the calls in flight may finish once the client has gone or a signal asks to stop. */
const GRACE_MS = 10_000;

/** As `serve` holds its conversations (actions/serve.ts). */
const IDLE_MS = 15 * 60 * 1000;
const MAX_WAITING = 8;

export async function runMcp(paths: string[], options: McpOptions): Promise<void> {
  const protocol = protocolStdout();
  const served = await loadServed(paths, options);
  if (served.some((item) => item.models.chatbot.answersFrom === 'rules'))
    writeErr(`[scripted] the answers come from the rules in ${options.script}, not from a model\n`);
  const { tools, renamed } = offeredTools(served);
  for (const line of renamed) writeErr(`warning: ${line}\n`);
  if (tools.length === 0)
    throw new UserError(
      'nothing to offer: no graph given has a function (a node named like f(a, b)) or a chat node, and no flow was given',
      2,
    );
  const onProblem = (message: string) => writeErr(`problem: ${message}\n`);
  // What a mistake in the user's settings stops is worked out before anything is made.
  const mcp = await mcpServersFor(options);
  const models = await resolveModels(options, undefined, 'fetch-on-first-call');
  const data = options.data === undefined ? undefined : resolve(options.data);
  const folder = data ?? (await mkdtemp(join(tmpdir(), 'meta-agent-mcp-')));
  try {
    await makeDataFolders(folder);
    const { ctx, beginClosing, inFlight } = serveContext({
      served,
      store: fileStore(folder),
      conversationKey: (id) => join(folder, 'conversations', `${id}.state.json`),
      flowRunKey: (id) => join(folder, 'flow-runs', `${id}.flow-run.json`),
      goalLoop: servedGoalLoop(options),
      ...(mcp && { mcp }),
      models,
      // MCP has no request bodies of ours to bound, and its client decides how long it waits.
      limits: { maxBodyBytes: 0, deadlineMs: 0, maxWaiting: MAX_WAITING, idleMs: IDLE_MS },
      onProblem,
    });
    const server = mcpServer(mcpService(ctx), 'local');
    const transport = new StdioServerTransport(process.stdin, protocol);
    // The client is gone when it closes our stdin (the SDK's transport does not watch for that).
    const gone = new Promise<void>((done) => {
      process.stdin.once('end', done);
      transport.onclose = done;
    });
    const stop = stopSignal();
    await server.connect(transport);
    writeErr(
      `meta-agent mcp: ${tools.length} tools on stdio: ${tools.map((tool) => tool.name).join(', ')}\n`,
    );
    if (process.stdin.isTTY)
      writeErr(
        'it waits for an MCP client on stdin: let the client start it (meta-agent mcp --help shows how)\n',
      );
    const signal = await Promise.race([gone.then(() => undefined), stop]);
    beginClosing();
    const deadline = Date.now() + GRACE_MS;
    await Promise.race([Promise.allSettled(inFlight()), delay(GRACE_MS)]);
    await ctx.hub.close(Math.max(0, deadline - Date.now()));
    await server.close();
    process.exitCode = signal === 'SIGINT' ? 130 : 0;
  } finally {
    await mcp?.close();
    if (data === undefined) await rm(folder, { recursive: true, force: true });
  }
}

/**
 * The stream the protocol goes to: this process's stdout, which from now on takes nothing else. What
 * any part of the process writes to stdout (a code node's library, a model runtime) goes to stderr,
 * where it cannot break the client's reading of the protocol.
 */
function protocolStdout(): Writable {
  const stdout = process.stdout;
  const write = stdout.write.bind(stdout);
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  return new Writable({
    write: (chunk: Buffer, _encoding, done) => write(chunk, (error) => done(error ?? null)),
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
