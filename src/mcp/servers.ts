/**
 * The user's MCP servers as one run uses them, through the official SDK's client: each is started (or
 * connected to) when first needed, its tools listed once, and all of them closed with the run, or killed
 * when the process exits.
 *
 * A server is untrusted: one that exits, never answers, answers what is not MCP or more than the cap
 * ends the call that needed it with one line saying so, and the run goes on. A server that failed to
 * start is not started again in the same run (it would cost the same wait every time).
 */
import type { Readable } from 'node:stream';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { allows } from '../allow-patterns.js';
import { UserError } from '../errors.js';
import type { McpServerConfig } from './config.js';
import { mcpCommandName } from './names.js';
import { toolResultText, type ToolOutcome } from './result-text.js';

/** A tool as a server lists it. */
export interface McpTool {
  server: string;
  name: string;
  title?: string;
  description: string;
  /** The tool's arguments as the server declares them (JSON Schema, an object). */
  inputSchema: Record<string, unknown>;
  /** The server says the tool changes nothing (`annotations.readOnlyHint`). */
  readOnly: boolean;
}

export interface McpCallOptions {
  signal?: AbortSignal;
  /** Told each progress notification the server sends for this call. */
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

/**
 * What tools may run where nobody is asked (a code node's `mcp.call`, a flow's tool node): a tool the
 * server marks read-only always may; any other only when `yes` (`--yes`) or an `allow` rule (`--allow
 * mcp__SERVER__TOOL`, `*` patterns) names it, since a shared graph or flow file chooses what it calls.
 */
export interface McpGrant {
  yes?: boolean;
  allow?: readonly string[];
}

export interface McpServersOptions {
  /**
   * How long a server may take to start, to list its tools, or to answer a call without sending progress
   * (default META_AGENT_MCP_TIMEOUT_MS, else 30 s).
   */
  timeoutMs?: number;
  /** What tools `callUnasked` may run besides read-only ones (default: none). */
  grant?: McpGrant;
}

/** The most one message from a server may hold; a bigger one ends the connection, not the process. */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** How much of a server's stderr is kept, to say why it failed. */
const STDERR_TAIL_CHARS = 2000;
/** The most tools a server may list (across pages): enough for any real server, bounded for a hostile one. */
const MAX_TOOLS = 1000;
const DEFAULT_TIMEOUT_MS = 30_000;

interface Connection {
  client: Client;
  tools?: Promise<McpTool[]>;
}

/** What a server did that explains a failure: its stderr, what it wrote that is not MCP, how it ended. */
class ServerTrace {
  stderr = '';
  notMcp: string | undefined;
  notMcpLines = 0;
  /** The last error the transport reported (a message too big, a broken pipe). */
  lastError: string | undefined;

  addStderr(chunk: string): void {
    this.stderr = (this.stderr + chunk).slice(-STDERR_TAIL_CHARS);
  }

  /** The most telling part of what went wrong, for the end of an error line. */
  detail(): string {
    const parts: string[] = [];
    if (this.notMcp !== undefined)
      parts.push(
        `it wrote ${this.notMcpLines} line(s) on stdout that are not MCP (${clip(this.notMcp, 100)})`,
      );
    const lastLine = this.stderr.trim().split('\n').at(-1)?.trim();
    if (lastLine) parts.push(`its stderr ends ${JSON.stringify(clip(lastLine, 160))}`);
    return parts.map((part) => `; ${part}`).join('');
  }
}

export class McpServers {
  readonly #configs: Map<string, McpServerConfig>;
  readonly #timeoutMs: number;
  readonly #grant: { yes: boolean; allow: ReadonlySet<string> };
  readonly #connections = new Map<string, Promise<Connection>>();
  /** What each server started did, to say why it failed. */
  readonly #traces = new Map<string, ServerTrace>();
  readonly #pids = new Set<number>();
  readonly #killOnExit = () => {
    for (const pid of this.#pids)
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // Gone already.
      }
  };

  constructor(configs: readonly McpServerConfig[], options: McpServersOptions = {}) {
    this.#configs = new Map(configs.map((config) => [config.name, config]));
    this.#timeoutMs = options.timeoutMs ?? timeoutFromEnv();
    this.#grant = { yes: options.grant?.yes ?? false, allow: new Set(options.grant?.allow ?? []) };
  }

  /** The configured servers' names, in the file's order. */
  names(): string[] {
    return [...this.#configs.keys()];
  }

  config(server: string): McpServerConfig | undefined {
    return this.#configs.get(server);
  }

  /** The tools of `server`, starting it when needed; listed once per connection (a failed listing is asked again). */
  async tools(server: string): Promise<McpTool[]> {
    const connection = await this.#connect(server);
    connection.tools ??= this.#listTools(server, connection.client).catch((error: unknown) => {
      connection.tools = undefined;
      throw error;
    });
    return connection.tools;
  }

  /**
   * The tools of every server, each started in parallel; a server that cannot be started or listed is
   * reported in `failed` with its reason, and the others' tools are still given.
   */
  async allTools(): Promise<{ tools: McpTool[]; failed: Array<{ server: string; reason: string }> }> {
    const listed = await Promise.allSettled(this.names().map((server) => this.tools(server)));
    const tools: McpTool[] = [];
    const failed: Array<{ server: string; reason: string }> = [];
    listed.forEach((outcome, index) => {
      if (outcome.status === 'fulfilled') tools.push(...outcome.value);
      else failed.push({ server: this.names()[index]!, reason: (outcome.reason as Error).message });
    });
    return { tools, failed };
  }

  /** Calls `tool` of `server` with `args`; a failure of the server or the call throws one clear line. */
  async call(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    options: McpCallOptions = {},
  ): Promise<ToolOutcome> {
    const { client } = await this.#connect(server);
    const onProgress = options.onProgress;
    try {
      const result = await client.callTool({ name: tool, arguments: args }, undefined, {
        timeout: this.#timeoutMs,
        resetTimeoutOnProgress: true,
        ...(options.signal && { signal: options.signal }),
        ...(onProgress && {
          onprogress: ({ progress, total, message }) =>
            onProgress({
              progress,
              ...(total !== undefined && { total }),
              ...(message !== undefined && { message }),
            }),
        }),
      });
      return toolResultText(result);
    } catch (error) {
      options.signal?.throwIfAborted();
      throw this.#failure(server, `the call of ${tool} failed`, error);
    }
  }

  /**
   * Calls `tool` where nobody can be asked whether it may (see McpGrant): a tool that is not read-only
   * and not granted, or that the server does not list, throws one line saying how to allow it.
   */
  async callUnasked(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    options: McpCallOptions = {},
  ): Promise<ToolOutcome> {
    const listed = await this.tools(server);
    const found = listed.find((candidate) => candidate.name === tool);
    if (!found) {
      const names = listed.map(({ name }) => name);
      throw new UserError(
        `MCP server "${server}" has no tool "${tool}"${names.length > 0 ? ` (it has ${names.join(', ')})` : ''}`,
      );
    }
    const command = mcpCommandName(server, tool);
    if (!found.readOnly && !this.#grant.yes && !allows(this.#grant.allow, command))
      throw new UserError(
        `the MCP tool ${server}/${tool} may change things (its server does not mark it read-only), and nobody is asked here`,
        1,
        `let it run with --allow ${command} (or --allow 'mcp__${server}__*', or --yes)`,
      );
    return this.call(server, tool, args, options);
  }

  /** Closes every connection (stopping stdio servers); safe to call more than once. */
  async close(): Promise<void> {
    const open = [...this.#connections.values()];
    this.#connections.clear();
    await Promise.all(
      open.map((connection) =>
        connection.then(
          ({ client }) => client.close(),
          () => undefined,
        ),
      ),
    );
    process.off('exit', this.#killOnExit);
  }

  /**
   * The connection to `server`, started on first use. One that failed to start, or whose server went
   * away, is forgotten: the next use starts the server again (a serving process outlives a bad moment).
   */
  #connect(server: string): Promise<Connection> {
    let connection = this.#connections.get(server);
    if (!connection) {
      const started = this.#start(server);
      const forget = () => {
        if (this.#connections.get(server) === started) this.#connections.delete(server);
      };
      started.then(({ client }) => (client.onclose = forget), forget);
      this.#connections.set(server, (connection = started));
    }
    return connection;
  }

  async #start(name: string): Promise<Connection> {
    const config = this.#configs.get(name);
    if (!config)
      throw new UserError(
        `there is no MCP server "${name}" in your configuration`,
        1,
        this.#configs.size > 0
          ? `configured: ${this.names().join(', ')}`
          : 'add it to your MCP configuration (--mcp-config FILE)',
      );
    const [{ Client }, transport] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      this.#transport(config),
    ]);
    const trace = this.#traces.get(name)!;
    const client = new Client({ name: 'meta-agent', version: '1' });
    client.onerror = (error) => {
      if (error instanceof SyntaxError || error.name === 'ZodError') {
        trace.notMcpLines += 1;
        trace.notMcp ??= error.message;
      } else trace.lastError = error.message;
    };
    try {
      await client.connect(transport, { timeout: this.#timeoutMs });
    } catch (error) {
      await client.close().catch(() => undefined);
      throw this.#failure(name, 'did not start', error);
    }
    return { client };
  }

  async #transport(config: McpServerConfig) {
    const trace = new ServerTrace();
    this.#traces.set(config.name, trace);
    if (config.kind === 'http') {
      const { StreamableHTTPClientTransport } =
        await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
      return new StreamableHTTPClientTransport(config.url, { requestInit: { headers: config.headers } });
    }
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const transport = new StdioClientTransport({
      command: config.command,
      args: config.args,
      env: config.env,
      ...(config.cwd !== undefined && { cwd: config.cwd }),
      stderr: 'pipe',
      maxBufferSize: MAX_MESSAGE_BYTES,
    });
    (transport.stderr as Readable | null)
      ?.setEncoding('utf8')
      .on('data', (chunk: string) => trace.addStderr(chunk));
    const start = transport.start.bind(transport);
    transport.start = async () => {
      await start();
      const pid = transport.pid;
      if (pid === null) return;
      if (this.#pids.size === 0) process.on('exit', this.#killOnExit);
      this.#pids.add(pid);
    };
    const close = transport.close.bind(transport);
    transport.close = async () => {
      if (transport.pid !== null) this.#pids.delete(transport.pid);
      await close();
    };
    return transport;
  }

  /** One line: which server, what failed, and what it did that says why. */
  #failure(server: string, what: string, error: unknown): UserError {
    const trace = this.#traces.get(server);
    let message = error instanceof Error ? error.message : String(error);
    // The connection closing is the consequence; the transport's own error says why.
    if (/Connection closed/i.test(message) && trace?.lastError) message = trace.lastError;
    const status = httpStatus(error);
    if (status !== undefined) message = `HTTP ${status}${serverSays(message)}`;
    if (message === 'fetch failed') message = `cannot reach it (${causeOf(error)})`;
    return new UserError(
      `MCP server "${server}": ${what}: ${reason(message, this.#timeoutMs)}${trace?.detail() ?? ''}`,
      1,
      /timed out/i.test(message)
        ? 'a slow server can be given longer with META_AGENT_MCP_TIMEOUT_MS (milliseconds)'
        : undefined,
    );
  }

  async #listTools(server: string, client: Client): Promise<McpTool[]> {
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    try {
      do {
        const page = await client.listTools(cursor === undefined ? {} : { cursor }, {
          timeout: this.#timeoutMs,
        });
        for (const tool of page.tools) {
          if (tools.length >= MAX_TOOLS) return tools;
          tools.push({
            server,
            name: tool.name,
            ...(tool.title !== undefined && { title: tool.title }),
            description: tool.description ?? '',
            inputSchema: tool.inputSchema as Record<string, unknown>,
            readOnly: tool.annotations?.readOnlyHint === true,
          });
        }
        cursor = page.nextCursor;
      } while (cursor !== undefined);
    } catch (error) {
      throw this.#failure(server, 'could not list its tools', error);
    }
    return tools;
  }
}

/** Why fetch failed: the system's error code, or undici's words. */
function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  return typeof cause?.message === 'string' ? cause.message : 'no reason given';
}

/** The status of an HTTP server's refusal (the SDK's StreamableHTTPError). */
function httpStatus(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error &&
    error.message.startsWith('Streamable HTTP error') &&
    typeof code === 'number' &&
    code >= 400
    ? code
    : undefined;
}

/** What an HTTP server's error body says: an OpenAI- or JSON-RPC-shaped message, else the text. */
function serverSays(message: string): string {
  const body = message.replace(/^Streamable HTTP error: [^:]*: ?/, '');
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    const said = typeof parsed.error === 'object' ? parsed.error.message : (parsed.error ?? parsed.message);
    if (typeof said === 'string') return ` (${said})`;
  } catch {
    // Not JSON: the text itself.
  }
  return body.trim() === '' ? '' : ` (${clip(body.trim(), 200)})`;
}

/** The SDK's messages, said as what happened. */
function reason(message: string, timeoutMs: number): string {
  if (/Request timed out|RequestTimeout/i.test(message)) return `no answer within ${timeoutMs / 1000} s`;
  if (/Connection closed/i.test(message)) return 'the connection closed (the server exited or hung up)';
  if (/ReadBuffer exceeded/i.test(message))
    return `it sent a message over ${MAX_MESSAGE_BYTES / 1024 / 1024} MB`;
  if (/ENOENT/.test(message)) return `its command was not found (${message})`;
  return clip(message.replace(/\s+/g, ' '), 300);
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function timeoutFromEnv(): number {
  const value = Number(process.env.META_AGENT_MCP_TIMEOUT_MS);
  return Number.isInteger(value) && value > 0 ? value : DEFAULT_TIMEOUT_MS;
}
