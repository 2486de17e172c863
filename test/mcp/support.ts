/** MCP configuration files for tests: servers started with this Node, from fixtures and from npm. */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The test server of test/fixtures/mcp (tools lookup, add, write_note, slow, big, fail). */
export const NOTES_SERVER = fileURLToPath(new URL('../fixtures/mcp/notes-server.mjs', import.meta.url));

/** The reference filesystem server, as npm installs it. */
export const FILESYSTEM_SERVER = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-filesystem/dist/index.js',
);

export type Mode = 'good' | 'exit' | 'silent' | 'garbage' | 'die-on-call';

/** A stdio entry running the notes server in `mode`, appending notes to `notesFile`. */
export function notesServer(mode: Mode = 'good', notesFile = '/dev/null') {
  return {
    command: process.execPath,
    args: [NOTES_SERVER, '--mode', mode],
    env: { NOTES_FILE: notesFile },
  };
}

/** Writes `{"mcpServers": servers}` to a new folder; returns the file's path. */
export async function mcpConfigFile(servers: Record<string, unknown>): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'mcp-config-'));
  const path = join(folder, 'mcp.json');
  await writeFile(path, JSON.stringify({ mcpServers: servers }));
  return path;
}
