import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startOpenAIServer, type ChatRequestBody, type OpenAIServer } from '../support/openai-server.js';
import { runCli } from '../support/run-cli.js';
import { mcpConfigFile, notesServer } from '../mcp/support.js';

let server: OpenAIServer | undefined;
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'meta-agent-aipl-chat-'));
});

afterEach(async () => {
  await server?.close();
  server = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** The text of a request's last message. */
function lastOf(body: ChatRequestBody): string {
  return String(body.messages.at(-1)!.content);
}

/** Writes an AIPL graph of `nodes` with `prompt` as its template; returns its path. */
async function aiplGraph(prompt: string, nodes: unknown[]): Promise<string> {
  const path = join(dir, 'agent.autogram.json');
  await writeFile(
    path,
    JSON.stringify({ name: 'agent', config: { aipl: {}, agentName: 'Riley', prompt }, nodes }),
  );
  return path;
}

describe('an AIPL graph in meta-agent chat', () => {
  it('sends the rendered template as the system message, as seed 002 does', async () => {
    server = await startOpenAIServer({
      reply: (body) => ({
        text: lastOf(body).includes("What is the user's name?") ? 'Dana' : 'Hello there.',
      }),
    });
    const graph = await aiplGraph(
      'You are {char}. The user is called {user.name:not known yet}.\n(= "What is the user\'s name?" -> user.name)',
      [{ name: 'talk', action: 'chat', instruction: 'Answer the user.', transitions: ['talk'] }],
    );
    const result = await runCli(['chat', graph, '--base-url', server.url, '--model', 'gpt-4o-mini'], {
      input: 'Hi, I am Dana.\n',
    });
    expect(result.code).toBe(0);
    const chats = server.chatRequests().filter((body) => lastOf(body).includes('Answer the user.'));
    expect(chats.map((body) => body.messages[0])).toEqual([
      { role: 'system', content: 'You are Riley. The user is called not known yet.' },
      { role: 'system', content: 'You are Riley. The user is called Dana.' },
    ]);
    for (const body of chats) expect(body.messages.slice(1).some((m) => m.role === 'system')).toBe(false);
  });

  it('lets a code node fetch a value into the state with aipl.set, logged as an update and read by the template', async () => {
    server = await startOpenAIServer({ reply: () => ({ text: 'Stay inside.' }) });
    const graph = await aiplGraph(
      'You are {char}. You are aware of the following dangers: {environment.dangers:none}',
      [
        {
          name: 'watch',
          action: 'code',
          instruction: 'aipl.set("environment.dangers", mcp.call("notes", "lookup", { key: "dangers" }))',
          transitions: ['check'],
        },
        {
          name: 'check',
          action: 'code',
          instruction: 'seen = aipl.environment.dangers',
          transitions: ['talk'],
        },
        { name: 'talk', action: 'chat', instruction: 'Answer the user.', transitions: ['talk'] },
      ],
    );
    const config = await mcpConfigFile({ notes: notesServer() });
    const state = join(dir, 'talk.json');
    const args = ['chat', graph, '--mcp-config', config, '--state', state, '--json'];
    const result = await runCli([...args, '--base-url', server.url, '--model', 'gpt-4o-mini'], { input: '' });
    expect(result.code).toBe(0);
    expect(server.chatRequests()[0]!.messages[0]).toEqual({
      role: 'system',
      content: 'You are Riley. You are aware of the following dangers: a storm is coming',
    });
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'aipl.phase',
        label: 'node watch',
        stored: [{ name: 'environment.dangers', value: 'a storm is coming' }],
      }),
    );
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'variable.set', name: 'seen', value: 'a storm is coming' }),
    );
    const history = await runCli(['history', state, '--aipl']);
    expect(history.stdout).toMatch(/environment\.dangers.*a storm is coming.*set by node watch/);
  });

  it('stores values from the command line with --aipl-set, for a new conversation and between replies', async () => {
    server = await startOpenAIServer({ reply: () => ({ text: 'Noted.' }) });
    const graph = await aiplGraph('You are {char}. Dangers: {environment.dangers:none}', [
      { name: 'talk', action: 'chat', instruction: 'Answer the user.', transitions: ['talk'] },
    ]);
    const state = join(dir, 'talk.json');
    const chat = (set: string, input: string) =>
      runCli(
        [
          'chat',
          graph,
          '--state',
          state,
          '--aipl-set',
          set,
          '--base-url',
          server!.url,
          '--model',
          'gpt-4o-mini',
        ],
        {
          input,
        },
      );
    expect((await chat('environment.dangers=a storm is coming', '')).code).toBe(0);
    expect((await chat('Environment.Dangers=clear skies', 'Anything to fear?\n')).code).toBe(0);
    expect(server.chatRequests().map((body) => body.messages[0]!.content)).toEqual([
      'You are Riley. Dangers: a storm is coming',
      'You are Riley. Dangers: clear skies',
    ]);
    const history = await runCli(['history', state, '--aipl']);
    expect(history.stdout).toMatch(/environment\.dangers.*clear skies.*set by the user/);

    const plain = join(dir, 'plain.autogram.json');
    await writeFile(
      plain,
      JSON.stringify({ name: 'plain', nodes: [{ name: 'a', action: 'chat', instruction: 'Hi.' }] }),
    );
    const refused = await runCli(['chat', plain, '--aipl-set', 'a.b=c', '--base-url', server.url], {
      input: '',
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      'error: the graph "plain" does not use AIPL, so it has no AIPL state to set\nhint: turn AIPL on with "aipl": {} in its config\n',
    );
    const badName = await runCli(['chat', graph, '--aipl-set', 'dangers=x'], { input: '' });
    expect(badName.code).toBe(2);
    expect(badName.stderr).toContain('expected ns.key=value');
  });
});
