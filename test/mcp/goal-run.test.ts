/**
 * MCP tools in goal runs, end to end: the built CLI as a subprocess, a loopback model that plays
 * `mcp__…` commands, and real MCP servers over stdio (the notes server written for the tests, and the
 * reference filesystem server from npm).
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { OpenAIServer } from '../support/openai-server.js';
import { startReplayServer, type AnswerShape, type ReplayStep } from '../support/replay-server.js';
import { runCli, type CliResult } from '../support/run-cli.js';
import { FILESYSTEM_SERVER, mcpConfigFile, notesServer } from './support.js';

let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const complete: ReplayStep = { name: 'task_complete', args: { reason: 'done' } };

async function run(
  steps: ReplayStep[],
  config: string,
  flags: string[],
  shape: AnswerShape = 'json',
): Promise<CliResult & { workspace: string }> {
  server = await startReplayServer(steps, shape);
  const workspace = await mkdtemp(join(tmpdir(), 'mcp-run-'));
  const result = await runCli(
    [
      'run',
      '--goal',
      'use the tools',
      '--workspace',
      workspace,
      '--base-url',
      server.url,
      '--model',
      'gpt-4o-mini',
      '--mcp-config',
      config,
      '--answers',
      shape === 'tools' ? 'auto' : 'json',
      ...flags,
    ],
    { env: { META_AGENT_MCP_TIMEOUT_MS: '3000' } },
  );
  return { ...result, workspace };
}

describe('MCP tools in a goal run', () => {
  it('offers each tool with its own schema; a read-only tool allowed by name runs, a side effect is refused', async () => {
    const notes = join(await mkdtemp(join(tmpdir(), 'notes-')), 'notes.txt');
    const config = await mcpConfigFile({ notes: notesServer('good', notes) });
    const result = await run(
      [
        { name: 'mcp__notes__lookup', args: { key: 'capital_of_france' } },
        { name: 'mcp__notes__write_note', args: { text: 'Paris' } },
        complete,
      ],
      config,
      ['--allow', 'mcp__notes__lookup'],
      'tools',
    );
    expect(result.code, result.stderr).toBe(0);
    const offered = server!.chatRequests()[0]!.tools!.map((tool) => tool.function);
    const lookup = offered.find((tool) => tool.name === 'mcp__notes__lookup');
    expect(lookup?.parameters).toMatchObject({
      type: 'object',
      properties: { key: { type: 'string', description: 'the fact’s key' } },
      required: ['key'],
    });
    expect(lookup?.description).toContain('read-only');
    const prompts = JSON.stringify(server!.chatRequests().at(-1)!.messages);
    expect(prompts).toContain('Paris');
    expect(result.stdout).toMatch(/step 2 · mcp__notes__write_note .* not run/);
    await expect(readFile(notes, 'utf8')).rejects.toThrow(/ENOENT/);
  });

  it("runs every tool of a server under --allow 'mcp__notes__*'", async () => {
    const notes = join(await mkdtemp(join(tmpdir(), 'notes-')), 'notes.txt');
    const config = await mcpConfigFile({ notes: notesServer('good', notes) });
    const result = await run(
      [{ name: 'mcp__notes__write_note', args: { text: 'buy milk' } }, complete],
      config,
      ['--allow', 'mcp__notes__*'],
    );
    expect(result.code, result.stderr).toBe(0);
    expect(await readFile(notes, 'utf8')).toBe('buy milk\n');
  });

  it('refuses bad arguments before the tool runs, saying what the schema wants', async () => {
    const config = await mcpConfigFile({ notes: notesServer() });
    const result = await run([{ name: 'mcp__notes__add', args: { a: 'two', b: 3 } }, complete], config, [
      '--yes',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const prompts = JSON.stringify(server!.chatRequests().at(-1)!.messages);
    expect(prompts).toContain('could not be used: \\"a\\": Invalid input: expected number, received string');
  });

  it('goes on without servers that exit at once, never answer or write what is not MCP, each said in one line', async () => {
    const config = await mcpConfigFile({
      gone: notesServer('exit'),
      mute: notesServer('silent'),
      noisy: notesServer('garbage'),
      notes: notesServer(),
    });
    const result = await run(
      [{ name: 'mcp__notes__lookup', args: { key: 'boiling_point_c' } }, complete],
      config,
      ['--yes'],
    );
    expect(result.code, result.stderr).toBe(0);
    const said = `${result.stdout}\n${result.stderr}`;
    expect(said).toMatch(/MCP server "gone": did not start: .*cannot open the notes database/);
    expect(said).toMatch(/MCP server "mute": did not start: no answer within 3 s/);
    expect(said).toMatch(/MCP server "noisy": did not start: .*not MCP \(Unexpected token 'W', "Welcome to"/);
    expect(said).not.toMatch(/\n\s+at /);
    expect(JSON.stringify(server!.chatRequests().at(-1)!.messages)).toContain('100');
  });

  it('ends a call whose server dies or floods it in one line, and the run goes on', async () => {
    const config = await mcpConfigFile({ dying: notesServer('die-on-call'), notes: notesServer() });
    const result = await run(
      [
        { name: 'mcp__dying__write_note', args: { text: 'x' } },
        { name: 'mcp__notes__big', args: {} },
        { name: 'mcp__notes__lookup', args: { key: 'capital_of_france' } },
        complete,
      ],
      config,
      ['--yes'],
    );
    expect(result.code, result.stderr).toBe(0);
    const messages = server!
      .chatRequests()
      .at(-1)!
      .messages.map((message) => message.content);
    expect(messages.join('\n')).toMatch(
      /Command mcp__dying__write_note failed[^\n]*\nError: MCP server "dying": the call of write_note failed: the connection closed/,
    );
    const big = messages.find((text) => text.startsWith('Command mcp__notes__big returned'))!;
    expect(big.length).toBeLessThan(10_000);
    expect(messages.join('\n')).toContain('Paris');
  });

  it('works with the reference filesystem server from npm, inside the folder it is given', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'mcp-fs-'));
    const config = await mcpConfigFile({
      fs: { command: process.execPath, args: [FILESYSTEM_SERVER, folder] },
    });
    const result = await run(
      [
        { name: 'mcp__fs__write_file', args: { path: join(folder, 'poem.txt'), content: 'roses\n' } },
        { name: 'mcp__fs__read_text_file', args: { path: join(folder, 'poem.txt') } },
        { name: 'mcp__fs__read_text_file', args: { path: '/etc/passwd' } },
        complete,
      ],
      config,
      ['--allow', 'mcp__fs__*'],
    );
    expect(result.code, result.stderr).toBe(0);
    expect(await readFile(join(folder, 'poem.txt'), 'utf8')).toBe('roses\n');
    const messages = server!
      .chatRequests()
      .at(-1)!
      .messages.map((message) => message.content);
    expect(messages.join('\n')).toMatch(/Command mcp__fs__read_text_file returned[^\n]*\nroses/);
    expect(messages.join('\n')).toMatch(
      /Command mcp__fs__read_text_file failed[^\n]*\nError: the tool said: .*denied/i,
    );
  });
});
