/**
 * MCP both ways at once: a goal run (the built CLI) whose MCP server is `meta-agent serve`'s `/mcp`,
 * reached over Streamable HTTP with a key from the configuration's headers. The served graph's function
 * becomes the run's command `mcp__agents__double`.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenAIServer } from '../support/openai-server.js';
import { startReplayServer } from '../support/replay-server.js';
import { cliEnv, runCli } from '../support/run-cli.js';
import { startServe, type ServeProcess } from '../support/serve.js';
import { mcpConfigFile, notesServer } from './support.js';

const KEY = 'both-ways-key';
let served: ServeProcess;
let model: OpenAIServer;

beforeAll(async () => {
  const data = join(await mkdtemp(join(tmpdir(), 'both-ways-')), 'data');
  served = await startServe(
    [
      'test/fixtures/tools/math.autogram.json',
      '--port',
      '0',
      '--provider',
      'scripted',
      '--script',
      'test/fixtures/tools/pirate.script.json',
      '--data',
      data,
    ],
    { env: { META_AGENT_API_KEYS: KEY } },
  );
  model = await startReplayServer(
    [
      { name: 'mcp__agents__double', args: { x: 21 } },
      { name: 'task_complete', args: { reason: 'doubled' } },
    ],
    'tools',
  );
});
afterAll(async () => {
  await served?.stop();
  await model?.close();
});

describe('a goal run using a served agent as its MCP server', () => {
  /** `run` with the goal "double 21", its MCP servers reaching serve's /mcp with `authorization`. */
  async function runWith(authorization: string, grant: string[]) {
    const config = await mcpConfigFile({
      agents: { url: `${served.url}/mcp`, headers: { Authorization: authorization } },
    });
    const workspace = await mkdtemp(join(tmpdir(), 'both-ways-run-'));
    const models = ['--base-url', model.url, '--model', 'gpt-4o-mini'];
    return runCli([
      'run',
      '--goal',
      'double 21',
      '--workspace',
      workspace,
      ...models,
      '--mcp-config',
      config,
      ...grant,
    ]);
  }

  it('calls the function over Streamable HTTP, with the key from the headers', async () => {
    const result = await runWith(`Bearer ${KEY}`, ['--allow', 'mcp__agents__*']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/step 1 · mcp__agents__double \{"x":21\} → 42/);
  });

  it('says in one line when the key is wrong, and the run goes on', async () => {
    const result = await runWith('Bearer wrong', ['--yes']);
    expect(`${result.stdout}${result.stderr}`).toMatch(
      /MCP server "agents": did not start: HTTP 401 \(the API key is not one of this server’s\)/,
    );
  });
});

describe('an agent served over MCP whose code calls another MCP server', () => {
  it('answers a function whose code node calls mcp.call, through meta-agent mcp on stdio', async () => {
    const config = await mcpConfigFile({ notes: notesServer() });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        fileURLToPath(new URL('../../bin/meta-agent.js', import.meta.url)),
        'mcp',
        'test/fixtures/mcp/facts.autogram.json',
        '--mcp-config',
        config,
        ...['--provider', 'scripted', '--script', 'test/fixtures/tools/pirate.script.json'],
      ],
      env: cliEnv(),
      cwd: fileURLToPath(new URL('../../', import.meta.url)),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(transport);
    try {
      const result = await client.callTool({ name: 'sum', arguments: { a: 20, b: 22 } });
      expect(result.isError).toBeFalsy();
      expect(result.content).toEqual([{ type: 'text', text: '42' }]);
    } finally {
      await client.close();
    }
  });
});
