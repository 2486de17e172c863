/**
 * Code nodes call MCP tools through the host door (`mcp.call`), under `meta-agent call` with
 * `--mcp-config`: the built CLI as a subprocess, the notes server over stdio.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { mcpConfigFile, notesServer } from './support.js';

const GRAPH = fileURLToPath(new URL('../fixtures/mcp/facts.autogram.json', import.meta.url));

describe('mcp.call in a code node', () => {
  it('returns structured content as a value and text as a string', async () => {
    const config = await mcpConfigFile({ notes: notesServer() });
    const sum = await runCli(['call', GRAPH, 'sum(2, 40)', '--mcp-config', config]);
    expect(sum.stderr).toBe('');
    expect(sum.stdout).toBe('42\n');
    const fact = await runCli(['call', GRAPH, 'fact("capital_of_france")', '--mcp-config', config]);
    expect(fact.stdout).toBe('"Paris"\n');
  });

  it('throws a tool error inside the code, and a dead server can be caught there', async () => {
    const config = await mcpConfigFile({ notes: notesServer(), gone: notesServer('exit') });
    const broken = await runCli(['call', GRAPH, 'broken()', '--mcp-config', config, '--yes']);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain('MCP tool notes/fail failed: the notes database is locked');
    expect(broken.stderr).not.toMatch(/\n\s+at /);
    const guarded = await runCli(['call', GRAPH, 'guarded()', '--mcp-config', config]);
    expect(guarded.stdout).toMatch(
      /^"caught: MCP server \\"gone\\": did not start: .*cannot open the notes database/,
    );
  });

  it('runs a tool that may change things only when --allow or --yes lets it: nobody is asked in a graph', async () => {
    const notes = join(await mkdtemp(join(tmpdir(), 'notes-')), 'notes.txt');
    const config = await mcpConfigFile({ notes: notesServer('good', notes) });
    const refused = await runCli(['call', GRAPH, 'note("milk")', '--mcp-config', config]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'the MCP tool notes/write_note may change things (its server does not mark it read-only), and nobody is asked here',
    );
    expect(refused.stderr).toContain("--allow mcp__notes__write_note (or --allow 'mcp__notes__*', or --yes)");
    await expect(readFile(notes, 'utf8')).rejects.toThrow(/ENOENT/);
    const allowed = await runCli([
      'call',
      GRAPH,
      'note("milk")',
      '--mcp-config',
      config,
      '--allow',
      'mcp__notes__write_*',
    ]);
    expect(allowed.stdout).toBe('"noted: milk"\n');
    expect(await readFile(notes, 'utf8')).toBe('milk\n');
  });

  it('says how to lend tools when no MCP servers are configured', async () => {
    const result = await runCli(['call', GRAPH, 'sum(1, 2)']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('`mcp` exists only when MCP servers are configured');
    expect(result.stderr).toContain('hint: pass --mcp-config FILE');
  });

  it('refuses an --mcp-config file that is missing or malformed, in one line', async () => {
    const missing = await runCli(['call', GRAPH, 'sum(1, 2)', '--mcp-config', '/nonexistent/mcp.json']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^error: cannot read the MCP configuration \/nonexistent\/mcp.json/);
    const bad = await mcpConfigFile({ 'bad name': { command: 'x' } });
    const malformed = await runCli(['call', GRAPH, 'sum(1, 2)', '--mcp-config', bad]);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('the server name "bad name" is not letters, digits');
  });

  it('never starts a server a graph file names: its mcpServers are ignored, and validate says why', async () => {
    const graph = JSON.parse(await readFile(GRAPH, 'utf8')) as Record<string, unknown>;
    const marker = join(await mkdtemp(join(tmpdir(), 'planted-')), 'ran');
    graph.config = { mcpServers: { notes: { command: 'touch', args: [marker] } } };
    const path = join(await mkdtemp(join(tmpdir(), 'graph-')), 'facts.autogram.json');
    await writeFile(path, JSON.stringify(graph));
    const validated = await runCli(['validate', path]);
    expect(validated.stdout).toContain(
      'config.mcpServers is ignored: a graph or flow file cannot add MCP servers; they come only from your MCP configuration',
    );
    const called = await runCli(['call', path, 'sum(1, 2)']);
    expect(called.code).toBe(1);
    expect(called.stderr).toContain('`mcp` exists only when MCP servers are configured');
    await expect(readFile(marker)).rejects.toThrow(/ENOENT/);
  });
});
