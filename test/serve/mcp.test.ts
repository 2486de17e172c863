/**
 * Designed agents as MCP tools, driven by the official SDK's `Client` over the real protocol: the built
 * CLI's `meta-agent mcp` on stdio (spawned by `StdioClientTransport`), and `meta-agent serve` at `/mcp`
 * over Streamable HTTP. Their model is a loopback OpenAI-compatible server.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIServer, type ChatRequestBody, type OpenAIServer } from '../support/openai-server.js';
import { cliEnv, runCli } from '../support/run-cli.js';
import { startServe, type ServeProcess } from '../support/serve.js';

const TUTOR = 'test/fixtures/mcp/tutor.autogram.json';
const FLOW = 'test/fixtures/flow-node/steps.flow.json';
const NO_MODEL = ['--base-url', 'http://127.0.0.1:9/v1', '-m', 'm'];
const bin = fileURLToPath(new URL('../../bin/meta-agent.js', import.meta.url));
const root = fileURLToPath(new URL('../../', import.meta.url));

/** The words of the conversation the tutor has heard so far, in its prompt: what shows it remembers. */
const WORDS = ['alpha', 'beta', 'gamma'];

/** The model: the flow's two prompts as steps.flow.json's tests answer them, the tutor its memory. */
function reply(body: ChatRequestBody): string {
  const prompt = body.messages.map((message) => message.content).join('\n');
  if (prompt.includes('List the steps')) return 'Buy flour.\nBake bread.';
  if (prompt.includes('State the goal of:')) return 'Fresh bread by noon.';
  return `heard: ${WORDS.filter((word) => prompt.includes(word)).join(' ')}`;
}

function text(result: CallToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  onprogress?: (p: Progress) => void,
) {
  return (await client.callTool(
    { name, arguments: args },
    undefined,
    onprogress && { onprogress },
  )) as CallToolResult;
}

/** What both transports must show, on a connected client. */
function behaves(connect: () => Client) {
  it('lists a tool for the conversation, one per function and one for the flow, with their schemas', async () => {
    const { tools } = await connect().listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['broken', 'simplify', 'steps', 'tutor']);
    const simplify = tools.find((tool) => tool.name === 'simplify')!;
    expect(simplify.inputSchema).toMatchObject({ required: ['numerator', 'denominator'] });
    expect(simplify.description).toContain('lowest terms');
    const tutor = tools.find((tool) => tool.name === 'tutor')!;
    expect(tutor.description).toContain('A tutor for fractions');
    expect(tutor.inputSchema).toMatchObject({ required: ['message'] });
    expect(tools.find((tool) => tool.name === 'steps')!.inputSchema).toMatchObject({ required: ['task'] });
  });

  it('calls a function with its arguments and answers its value as JSON, with progress', async () => {
    const progress: Progress[] = [];
    const result = await call(connect(), 'simplify', { numerator: 6, denominator: 8 }, (p) =>
      progress.push(p),
    );
    expect(result.isError).toBeFalsy();
    expect(text(result)).toBe('"3/4"');
    expect(progress[0]?.message).toMatch(/^node simplify/);
  });

  it('holds a conversation of three turns, carried by conversation_id', async () => {
    const client = connect();
    const progress: Progress[] = [];
    const first = await call(client, 'tutor', { message: 'alpha' }, (p) => progress.push(p));
    expect(progress[0]?.message).toBe('node start1');
    const id = (first.structuredContent as { conversation_id: string }).conversation_id;
    expect(first.structuredContent).toMatchObject({ reply: 'heard: alpha', ended: false });
    expect(text(first)).toContain(id);
    await call(client, 'tutor', { message: 'beta', conversation_id: id });
    const third = await call(client, 'tutor', { message: 'gamma', conversation_id: id });
    expect(third.structuredContent).toEqual({
      reply: 'heard: alpha beta gamma',
      conversation_id: id,
      ended: false,
    });
    // Without the id, a new conversation, which has heard nothing before.
    const other = await call(client, 'tutor', { message: 'gamma' });
    expect(other.structuredContent).toMatchObject({ reply: 'heard: gamma' });
  });

  it('runs a flow pass on its inputs, telling the progress of each node', async () => {
    const progress: Progress[] = [];
    const result = await call(connect(), 'steps', { task: 'bake bread' }, (p) => progress.push(p));
    expect(result.isError).toBeFalsy();
    expect(JSON.parse(text(result))).toEqual({ steps: 'Buy flour.\nBake bread.' });
    expect(progress.map((p) => [p.progress, p.total, p.message])).toEqual([
      [1, 2, 'goal: done'],
      [2, 2, 'steps: done'],
    ]);
  });

  it('answers bad arguments, a failing function and an unknown conversation with one line marked isError', async () => {
    const client = connect();
    const missing = await call(client, 'simplify', { numerator: 6 });
    expect(missing).toMatchObject({ isError: true });
    expect(text(missing)).toBe('simplify needs the argument "denominator" (it takes numerator, denominator)');
    const extra = await call(client, 'steps', { task: 'x', colour: 'red' });
    expect(text(extra)).toBe('steps takes no argument "colour"; it takes task');
    const empty = await call(client, 'tutor', { message: '' });
    expect(empty.isError).toBe(true);
    const broken = await call(client, 'broken', {});
    expect(broken.isError).toBe(true);
    expect(text(broken)).toMatch(/no_such_variable/);
    expect(text(broken).split('\n')).toHaveLength(1);
    const unknown = await call(client, 'tutor', { message: 'hi', conversation_id: 'conv_nobody' });
    expect(text(unknown)).toBe(
      'there is no conversation conv_nobody; leave conversation_id out to start a new one',
    );
    // The server goes on.
    expect(text(await call(client, 'simplify', { numerator: 2, denominator: 4 }))).toBe('"1/2"');
  });
}

async function connected(transport: Transport): Promise<Client> {
  const client = new Client({ name: 'meta-agent-tests', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

describe('meta-agent mcp on stdio', () => {
  let openai: OpenAIServer;
  let client: Client;
  let stderr = '';
  beforeAll(async () => {
    openai = await startOpenAIServer({ reply });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin, 'mcp', TUTOR, FLOW, '--base-url', openai.url, '--model', 'gpt-4o-mini'],
      env: cliEnv(),
      cwd: root,
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    client = await connected(transport);
  });
  afterAll(async () => {
    await client?.close();
    await openai?.close();
  });

  it('initializes as meta-agent, offering tools, and says on stderr what it offers', () => {
    expect(client.getServerVersion()?.name).toBe('meta-agent');
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    expect(stderr).toContain('meta-agent mcp: 4 tools on stdio: tutor, simplify, broken, steps');
  });

  behaves(() => client);
});

describe('meta-agent mcp starting', () => {
  it('says on stderr which tool it renamed when two would share a name, and ends when stdin closes', async () => {
    const result = await runCli(['mcp', TUTOR, 'test/fixtures/mcp/fractions.autogram.json', ...NO_MODEL]);
    expect(result).toMatchObject({ code: 0, stdout: '' });
    expect(result.stderr).toContain(
      'warning: the tool name "simplify" is taken: the function simplify of the agent "fractions" is offered as "fractions_simplify"',
    );
    expect(result.stderr).toContain('4 tools on stdio: tutor, simplify, broken, fractions_simplify');
  });

  it('refuses graphs that offer no tool, in one line', async () => {
    const result = await runCli(['mcp', 'test/fixtures/mcp/thinker.autogram.json', ...NO_MODEL]);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toBe(
      'error: nothing to offer: no graph given has a function (a node named like f(a, b)) or a chat node, and no flow was given\n',
    );
  });
});

describe('meta-agent serve at /mcp', () => {
  const [KEY, OTHER_KEY] = ['mcp-key', 'other-key'];
  let openai: OpenAIServer;
  let server: ServeProcess;
  let client: Client;
  const transport = (key?: string) =>
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: key ? { Authorization: `Bearer ${key}` } : {} },
    });
  beforeAll(async () => {
    openai = await startOpenAIServer({ reply });
    const data = join(await mkdtemp(join(tmpdir(), 'serve-mcp-')), 'data');
    server = await startServe(
      [TUTOR, FLOW, '--port', '0', '--base-url', openai.url, '--model', 'gpt-4o-mini', '--data', data],
      { env: { META_AGENT_API_KEYS: `${KEY},${OTHER_KEY}` } },
    );
    client = await connected(transport(KEY));
  });
  afterAll(async () => {
    await client?.close();
    await server?.stop();
    await openai?.close();
  });

  it('asks for the same API key as /v1', async () => {
    await expect(connected(transport())).rejects.toThrow(/401|Unauthorized|API key/i);
    expect(client.getServerVersion()?.name).toBe('meta-agent');
  });

  behaves(() => client);

  it("holds each key's conversations apart, the same ones /v1 shows", async () => {
    const first = await call(client, 'tutor', { message: 'alpha' });
    const id = (first.structuredContent as { conversation_id: string }).conversation_id;
    const shown = await fetch(`${server.url}/v1/conversations/${id}`, {
      headers: { Authorization: `Bearer ${KEY}` },
    });
    expect(await shown.json()).toMatchObject({
      graph: 'tutor',
      messages: [
        { role: 'user', content: 'alpha' },
        { role: 'assistant', content: 'heard: alpha' },
      ],
    });
    const other = await connected(transport(OTHER_KEY));
    const taken = await call(other, 'tutor', { message: 'beta', conversation_id: id });
    expect(text(taken)).toBe(`there is no conversation ${id}; leave conversation_id out to start a new one`);
    await other.close();
  });
});
