/**
 * Flows run from autograms through the real CLI: a `flow` node, and code calling `flows.run`, run a
 * pass of a flow file next to the graph and get its outputs; a graph cannot reach a flow outside its
 * folder. The model is the scripted provider, or a loopback server where the models a flow's nodes name
 * must reach it.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { closedUrl, startOpenAIServer } from '../support/openai-server.js';
import { runCli } from '../support/run-cli.js';

const GRAPH = 'test/fixtures/flow-node/planner.autogram.json';
const scripted = ['--provider', 'scripted', '--script', 'test/fixtures/flow-node/steps.script.json'];

let env: Record<string, string>;
beforeAll(async () => {
  env = { META_AGENT_PROBE_URLS: await closedUrl() };
});

describe('flows in autograms', () => {
  it('a flow node runs the flow with its inputs and stores the outputs in its variable', async () => {
    const result = await runCli(['call', GRAPH, 'plan("bake bread")', ...scripted], { env });
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      complete: true,
      outputs: { goal: 'Fresh bread by noon.', steps: 'Buy flour.\nBake bread.' },
      failed: {},
    });
  });

  it('code calls flows.run and uses an output', async () => {
    const result = await runCli(['call', GRAPH, 'first_step("bake bread")', ...scripted], { env });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toBe('Buy flour.');
  });

  it('refuses a flow file outside the graph’s folder', async () => {
    const result = await runCli(['call', GRAPH, 'escape()', ...scripted], { env });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("../../../examples/plan-task.flow.json is outside the graph's folder");
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('the models a flow’s nodes name answer them, as in flow run', async () => {
    const server = await startOpenAIServer({
      models: ['chat-model', 'small-model', 'big-model'],
      rejectUnknownModels: true,
      reply: (body) => `answer from ${body.model}`,
    });
    try {
      // --model would answer every node (it replaces every chat role); the chatbot's own variable does not.
      const result = await runCli(['call', GRAPH, 'tiers("bake bread")', '--base-url', server.url], {
        env: { ...env, META_AGENT_CHATBOT_MODEL: 'chat-model' },
      });
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({
        complete: true,
        outputs: {
          goal: 'answer from small-model',
          steps: 'answer from big-model',
          check: 'answer from chat-model',
        },
      });
    } finally {
      await server.close();
    }
  });
});
