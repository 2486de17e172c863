/**
 * A served flow asks each node of the model it names, as `flow run` does: the built CLI's `meta-agent
 * serve` with AgentKit's quick-start, a loopback OpenAI-compatible server as its models.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PassView } from '../../src/serve/flow-passes.js';
import { startOpenAIServer, type OpenAIServer } from '../support/openai-server.js';
import { startServe, type ServeProcess } from '../support/serve.js';

const KEY = 'node-models-key';

describe('a served flow whose nodes name their models', () => {
  let openai: OpenAIServer;
  let server: ServeProcess;
  beforeAll(async () => {
    openai = await startOpenAIServer({ models: ['gpt-4o-mini', 'gpt-4o'], rejectUnknownModels: true });
    const data = join(await mkdtemp(join(tmpdir(), 'serve-node-models-')), 'data');
    server = await startServe(
      ['examples/agentkit-quickstart.flow.json', '--port', '0', '--base-url', openai.url, '--data', data],
      { env: { META_AGENT_API_KEYS: KEY } },
    );
  });
  afterAll(async () => {
    await server?.stop();
    await openai?.close();
  });

  it('sends each node to its role’s model and reports which answered', async () => {
    const response = await fetch(`${server.url}/v1/flows/agentkit-quickstart/passes`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ inputs: {} }),
    });
    const report = (await response.json()) as PassView;
    expect(response.status, JSON.stringify(report)).toBe(201);
    expect(report).toMatchObject({
      complete: true,
      results: {
        pros_cons: { status: 'done', model: 'gpt-4o-mini' },
        outline: { status: 'done', model: 'gpt-4o-mini' },
        essay: { status: 'done', model: 'gpt-4o' },
      },
    });
    expect(openai.chatRequests().map((body) => body.model)).toEqual(['gpt-4o-mini', 'gpt-4o-mini', 'gpt-4o']);
  });
});
