/**
 * The user's MCP servers over a process's life: a server that failed to start, or went away, is started
 * again on its next use, as a serving process (serve, mcp, worker) needs after a bad moment.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readMcpConfig } from '../../src/mcp/config.js';
import { McpServers } from '../../src/mcp/servers.js';
import { mcpConfigFile, NOTES_SERVER } from './support.js';

let servers: McpServers | undefined;
let folder: string | undefined;
afterEach(async () => {
  await servers?.close();
  if (folder) await rm(folder, { recursive: true, force: true });
  [servers, folder] = [undefined, undefined];
});

describe('McpServers', () => {
  it('starts a server again on its next use after it failed to start', async () => {
    folder = await mkdtemp(join(tmpdir(), 'mcp-flaky-'));
    // Exits at its first start, and is the notes server from the second on.
    const flaky = {
      command: '/bin/sh',
      args: ['-c', 'if [ -e "$FLAG" ]; then exec "$NODE" "$SERVER"; fi; touch "$FLAG"; exit 3'],
      env: { FLAG: join(folder, 'started'), NODE: process.execPath, SERVER: NOTES_SERVER },
    };
    servers = new McpServers(await readMcpConfig(await mcpConfigFile({ flaky }), true));
    await expect(servers.tools('flaky')).rejects.toThrow(/MCP server "flaky": did not start/);
    const tools = await servers.tools('flaky');
    expect(tools.map((tool) => tool.name)).toContain('lookup');
  });
});
