/**
 * The user's MCP servers, in the format Claude Desktop, Cursor, Gemini CLI and codex already read:
 * `{"mcpServers": {"NAME": {"command", "args", "env", "cwd"}}}` for a server started over stdio, and
 * `{"url", "headers"}` for one reached over Streamable HTTP. Keys other clients add (`autoApprove`,
 * `timeout`, …) are ignored, so the same file serves them all; `"disabled": true` leaves a server out.
 *
 * Servers come only from here, a file the user names or keeps in their configuration folder: a graph or
 * flow file can name tools it needs but never add a server or its command line (as with credentials).
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { InvalidFileError, UserError } from '../errors.js';

/**
 * A server name: it becomes part of command names (`mcp__NAME__TOOL`), which models accept as
 * `[A-Za-z0-9_-]`; `__` would make such a name ambiguous.
 */
const SERVER_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*(?<!_)$/;

export interface StdioServer {
  kind: 'stdio';
  name: string;
  command: string;
  args: string[];
  /** Added to a minimal environment (HOME, PATH, …): the run's keys reach a server only when written here. */
  env: Record<string, string>;
  cwd?: string;
}

export interface HttpServer {
  kind: 'http';
  name: string;
  url: URL;
  headers: Record<string, string>;
}

export type McpServerConfig = StdioServer | HttpServer;

const stdioSchema = z.object({
  type: z.literal('stdio').optional(),
  command: z.string().trim().min(1, 'is empty'),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().min(1).optional(),
  disabled: z.boolean().optional(),
});

const httpSchema = z.object({
  type: z.enum(['http', 'streamable-http', 'streamableHttp']).optional(),
  url: z.url({ protocol: /^https?$/, error: 'is not an http(s) URL' }),
  headers: z.record(z.string(), z.string()).default({}),
  disabled: z.boolean().optional(),
});

const fileSchema = z.object({ mcpServers: z.record(z.string(), z.unknown()) });

const EXAMPLE =
  '{"mcpServers": {"files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}}}';

/**
 * The servers of the file at `path`. `required`: the user named the file, so a missing one is an error;
 * the default file may be absent (no servers). Anything wrong in it is an error naming the server and field.
 */
export async function readMcpConfig(path: string, required: boolean): Promise<McpServerConfig[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !required) return [];
    throw new UserError(`cannot read the MCP configuration ${path}: ${(error as Error).message}`, 2);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidFileError(`${path} is not JSON: ${(error as Error).message}`, `expected ${EXAMPLE}`);
  }
  return parseMcpConfig(value, path);
}

/** The servers of an already parsed configuration (`where` names it in errors). */
export function parseMcpConfig(value: unknown, where: string): McpServerConfig[] {
  const file = fileSchema.safeParse(value);
  if (!file.success)
    throw new InvalidFileError(`${where}: expected an object with "mcpServers"`, `for example ${EXAMPLE}`);
  const servers: McpServerConfig[] = [];
  for (const [name, entry] of Object.entries(file.data.mcpServers)) {
    const server = serverConfig(name, entry, where);
    if (server) servers.push(server);
  }
  return servers;
}

function serverConfig(name: string, entry: unknown, where: string): McpServerConfig | undefined {
  if (!SERVER_NAME.test(name))
    throw new InvalidFileError(
      `${where}: the server name ${JSON.stringify(name)} is not letters, digits, "-" and single "_"`,
      'rename it: it becomes part of each tool’s command name (mcp__NAME__TOOL)',
    );
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
    throw new InvalidFileError(`${where}: mcpServers.${name} must be an object`, `for example ${EXAMPLE}`);
  if ((entry as { type?: unknown }).type === 'sse')
    throw new InvalidFileError(
      `${where}: mcpServers.${name} uses the old SSE transport, which meta-agent does not speak`,
      'give the server’s Streamable HTTP URL (usually ending in /mcp) with "type": "http"',
    );
  const isHttp = 'url' in entry;
  const parsed = (isHttp ? httpSchema : stdioSchema).safeParse(entry);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.length > 0 ? `.${issue.path.join('.')}` : '';
    throw new InvalidFileError(
      `${where}: mcpServers.${name}${field}: ${issue.message}`,
      isHttp ? 'an HTTP server is {"url": "https://…/mcp", "headers": {…}}' : `for example ${EXAMPLE}`,
    );
  }
  if (parsed.data.disabled) return undefined;
  if ('url' in parsed.data)
    return { kind: 'http', name, url: new URL(parsed.data.url), headers: parsed.data.headers };
  const { command, args, env, cwd } = parsed.data;
  return { kind: 'stdio', name, command, args, env, ...(cwd !== undefined && { cwd }) };
}
