/**
 * A shared graph file names its own model servers (`config.models.<role>.baseUrl`). The user's API key
 * must never follow such a URL unless the user trusts that server.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveEndpoints } from '../../src/llm/config.js';
import { startOpenAIServer, type OpenAIServer } from '../support/openai-server.js';
import { runCli } from '../support/run-cli.js';

const SECRET = 'sk-user-secret';

describe('a graph-supplied endpoint', () => {
  it('gets no key, and says which key it did not get', async () => {
    const endpoints = await resolveEndpoints({
      env: { OPENAI_API_KEY: SECRET },
      graph: { chatbot: { baseUrl: 'https://collector.example/v1', model: 'm' } },
    });
    expect(endpoints.chatbot).toMatchObject({
      baseUrl: 'https://collector.example/v1',
      urlFromGraph: true,
      withheldKey: 'OPENAI_API_KEY',
    });
    expect(endpoints.chatbot).not.toHaveProperty('apiKey');
    // The roles the graph does not redirect keep going to OpenAI with the key.
    expect(endpoints.classifier).toMatchObject({ baseUrl: 'https://api.openai.com/v1', apiKey: SECRET });
  });

  it('keeps a per-role key from a graph URL too', async () => {
    const endpoints = await resolveEndpoints({
      env: { META_AGENT_USERBOT_API_KEY: 'sk-userbot', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' },
      graph: { userbot: { baseUrl: 'https://collector.example/v1', model: 'm' } },
      flags: { model: 'm' },
    });
    // OPENAI_BASE_URL outranks the graph, so the graph's URL is not even used.
    expect(endpoints.userbot).toMatchObject({ baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-userbot' });
    const fromGraph = await resolveEndpoints({
      env: { META_AGENT_USERBOT_API_KEY: 'sk-userbot', OPENAI_API_KEY: SECRET },
      graph: { userbot: { baseUrl: 'https://collector.example/v1', model: 'm' } },
    });
    expect(fromGraph.userbot).toMatchObject({ withheldKey: 'META_AGENT_USERBOT_API_KEY' });
    expect(fromGraph.userbot).not.toHaveProperty('apiKey');
  });

  it('gets the key when it is OpenAI itself, or a server the user trusts', async () => {
    const graph = { chatbot: { baseUrl: 'https://api.openai.com/v1', model: 'm' } };
    const openai = await resolveEndpoints({ env: { OPENAI_API_KEY: SECRET }, graph });
    expect(openai.chatbot).toMatchObject({ apiKey: SECRET });
    const listed = await resolveEndpoints({
      env: { OPENAI_API_KEY: SECRET, META_AGENT_TRUSTED_URLS: 'http://x.test, https://collector.example' },
      graph: { chatbot: { baseUrl: 'https://collector.example/v1', model: 'm' } },
    });
    expect(listed.chatbot).toMatchObject({ apiKey: SECRET });
    expect(listed.chatbot).not.toHaveProperty('withheldKey');
  });

  it('gets the key when the user names the same URL on the command line', async () => {
    const endpoints = await resolveEndpoints({
      env: { OPENAI_API_KEY: SECRET },
      graph: { chatbot: { baseUrl: 'https://collector.example/v1', model: 'm' } },
      flags: { baseUrl: 'https://collector.example/v1', model: 'm', roleModels: { embedder: 'e' } },
    });
    expect(endpoints.chatbot).toMatchObject({ apiKey: SECRET });
    expect(endpoints.chatbot).not.toHaveProperty('urlFromGraph');
  });
});

describe('meta-agent chat on a graph that names its own server', () => {
  let dir: string;
  let server: OpenAIServer;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'meta-agent-credentials-'));
    server = await startOpenAIServer({ defaultAnswer: 'Hello from the graph server.' });
  });

  afterEach(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function writeGraph(): Promise<string> {
    const path = join(dir, 'shared.autogram.json');
    const graph = {
      format: 'meta-agent/autogram@1',
      name: 'shared',
      config: { models: { chatbot: { baseUrl: server.url, model: 'gpt-4o-mini' } } },
      nodes: [{ name: 'start1', action: 'chat', instruction: 'Say hello.', transitions: ['quit'] }],
    };
    await writeFile(path, JSON.stringify(graph));
    return path;
  }

  it('sends the conversation there without the key, and says so', async () => {
    const result = await runCli(['chat', await writeGraph()], {
      input: '',
      env: { OPENAI_API_KEY: SECRET },
    });
    expect(result.stdout).toContain('Hello from the graph server.');
    const authorizations = server.requests.map((request) => request.headers.authorization);
    expect(authorizations.length).toBeGreaterThan(0);
    expect(authorizations.join(' ')).not.toContain(SECRET);
    expect(result.stderr).toContain(`the graph sends the chatbot calls to ${server.url}`);
    expect(result.stderr).toContain('OPENAI_API_KEY is not sent there');
  });

  it('sends the key once the user trusts the server', async () => {
    const result = await runCli(['chat', await writeGraph()], {
      input: '',
      env: { OPENAI_API_KEY: SECRET, META_AGENT_TRUSTED_URLS: server.url },
    });
    expect(result.stdout).toContain('Hello from the graph server.');
    expect(server.requests.map((request) => request.headers.authorization)).toContain(`Bearer ${SECRET}`);
    expect(result.stderr).toContain(`the graph sends the chatbot calls to ${server.url}`);
    expect(result.stderr).not.toContain('is not sent there');
  });
});

describe('meta-agent flow run on a flow that names its own server', () => {
  let dir: string;
  let server: OpenAIServer;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'meta-agent-credentials-'));
    server = await startOpenAIServer({ defaultAnswer: 'Hello from the flow server.' });
  });

  afterEach(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('sends the prompts there without the key, and says so as it does for a graph', async () => {
    const path = join(dir, 'shared.flow.json');
    const flow = {
      name: 'shared',
      config: { models: { chatbot: { baseUrl: server.url, model: 'gpt-4o-mini' } } },
      nodes: [{ name: 'hello', prompt: 'Say hello.' }],
    };
    await writeFile(path, JSON.stringify(flow));
    const result = await runCli(['flow', 'run', path], { env: { OPENAI_API_KEY: SECRET } });
    expect(result.stdout).toContain('Hello from the flow server.');
    const authorizations = server.requests.map((request) => request.headers.authorization);
    expect(authorizations.length).toBeGreaterThan(0);
    expect(authorizations.join(' ')).not.toContain(SECRET);
    expect(result.stderr).toContain(
      `[models] the flow sends the chatbot calls to ${server.url}; OPENAI_API_KEY is not sent there ` +
        '(list it in META_AGENT_TRUSTED_URLS to send it)',
    );
  });
});
