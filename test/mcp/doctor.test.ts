/** `meta-agent doctor` starts each configured MCP server and reports its tools, or why it failed. */
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { FILESYSTEM_SERVER, mcpConfigFile, notesServer } from './support.js';

const SCRIPTED = ['--provider', 'scripted', '--script', 'test/fixtures/tools/pirate.script.json'];

describe('doctor and MCP servers', () => {
  it('lists each server’s tools, and says why one failed', async () => {
    const config = await mcpConfigFile({
      notes: notesServer(),
      broken: notesServer('exit'),
      fs: { command: process.execPath, args: [FILESYSTEM_SERVER, '.'] },
    });
    const result = await runCli(['doctor', ...SCRIPTED, '--mcp-config', config]);
    expect(result.code).toBe(1);
    const lines = result.stdout.split('\n');
    expect(lines).toContainEqual(expect.stringMatching(/^ok {4}mcp {9}3 server\(s\) in /));
    expect(lines).toContainEqual(
      expect.stringMatching(/^ok {4}mcp notes {3}6 tool\(s\): lookup, add, write_note, slow, big, fail \(/),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(/^ok {4}mcp fs {6}14 tool\(s\): read_file, .* and 6 more/),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^fail {2}mcp broken {2}MCP server "broken": did not start: .*cannot open the notes database.* — fix: /,
      ),
    );
  });

  it('says when no server is configured', async () => {
    const result = await runCli(['doctor', ...SCRIPTED]);
    expect(result.stdout).toMatch(/^ok {4}mcp {9}no MCP servers configured \(.*mcp\.json\)/m);
  });
});
