import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { startOpenAIServer, type ChatRequestBody, type OpenAIServer } from '../support/openai-server.js';
import { runCli } from '../support/run-cli.js';

let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface ExampleNode {
  name: string;
  prompt: string;
  model?: string;
  dependencies?: string[];
  after?: string[];
  system?: string;
}

interface Example {
  config: { system?: string; models: Record<string, { model: string }> };
  database: { manual?: string; history?: { role: string; content: string }[] };
  nodes: ExampleNode[];
}

async function example(name: string): Promise<Example> {
  return JSON.parse(await readFile(`examples/${name}.flow.json`, 'utf8')) as Example;
}

/** The start of a node's prompt, before any template: how the server tells which node asks. */
const opening = (node: ExampleNode) => node.prompt.slice(0, 40);

/**
 * A server that serves exactly the models the example names (any other is a 404) and answers each
 * node with a text naming the node and the model the request was sent to, so a later node's messages
 * show whose answers it read.
 */
async function serverFor(flow: Example): Promise<OpenAIServer> {
  const models = Object.values(flow.config.models).map((ref) => ref.model);
  return startOpenAIServer({
    models,
    rejectUnknownModels: true,
    reply: (body) => {
      const node = nodeOf(flow, body);
      return node && `answer of ${node.name} from ${body.model}`;
    },
  });
}

function nodeOf(flow: Example, body: ChatRequestBody): ExampleNode | undefined {
  const last = body.messages.at(-1)!.content;
  return flow.nodes.find((node) => last.startsWith(opening(node)));
}

/** Each node's request, by node name. */
function requestsByNode(flow: Example, srv: OpenAIServer): Map<string, ChatRequestBody> {
  const byNode = new Map<string, ChatRequestBody>();
  for (const body of srv.chatRequests()) byNode.set(nodeOf(flow, body)!.name, body);
  return byNode;
}

/** The round each node's request arrived in (one more than any answered before it). */
function roundsByNode(flow: Example, srv: OpenAIServer): Map<string, number> {
  const rounds = new Map<string, number>();
  for (const request of srv.requests) {
    if (request.path !== '/v1/chat/completions') continue;
    rounds.set(nodeOf(flow, request.body as ChatRequestBody)!.name, request.round);
  }
  return rounds;
}

/** The model a node's `model` field stands for in the example (its role's, or the name itself). */
function expectedModel(flow: Example, node: ExampleNode): string {
  return flow.config.models[node.model!]?.model ?? node.model!;
}

async function runExample(name: string, srv: OpenAIServer) {
  const result = await runCli(['flow', 'run', `examples/${name}.flow.json`, '--base-url', srv.url, '--json']);
  const lines = result.stdout.trim().split('\n');
  const report = JSON.parse(lines.at(-1)!) as {
    type: string;
    complete: boolean;
    results: Record<string, { status: string; model?: string }>;
  };
  return { result, report };
}

describe('the shipped AgentKit examples against a loopback server', () => {
  it("runs AgentKit's quick-start with the fast and reasoning models its nodes name", async () => {
    const flow = await example('agentkit-quickstart');
    server = await serverFor(flow);
    const { result, report } = await runExample('agentkit-quickstart', server);
    expect(result.code, result.stderr).toBe(0);
    expect(report.complete).toBe(true);

    const requests = requestsByNode(flow, server);
    for (const node of flow.nodes) {
      expect(requests.get(node.name)?.model).toBe(expectedModel(flow, node));
      expect(report.results[node.name]?.model).toBe(expectedModel(flow, node));
    }
    expect(requests.get('pros_cons')!.model).toBe('gpt-4o-mini');
    expect(requests.get('essay')!.model).toBe('gpt-4o');
    // The essay reads both earlier answers as earlier turns, in the order it lists them, then asks.
    const byName = Object.fromEntries(flow.nodes.map((node) => [node.name, node.prompt]));
    expect(requests.get('essay')!.messages).toEqual([
      { role: 'user', content: byName.pros_cons },
      { role: 'assistant', content: 'answer of pros_cons from gpt-4o-mini' },
      { role: 'user', content: byName.outline },
      { role: 'assistant', content: 'answer of outline from gpt-4o-mini' },
      { role: 'user', content: byName.essay },
    ]);
    expect(result.stdout).toContain('answer of essay from gpt-4o');
  });

  it('runs the Crafter planner: each tier on its model, composed messages, order-only edges kept', async () => {
    const flow = await example('crafter-planner');
    server = await serverFor(flow);
    const { result, report } = await runExample('crafter-planner', server);
    expect(result.code, result.stderr).toBe(0);
    expect(report.complete).toBe(true);
    expect(flow.nodes.length).toBeGreaterThanOrEqual(10);

    const requests = requestsByNode(flow, server);
    expect([...requests.keys()].sort()).toEqual(flow.nodes.map((node) => node.name).sort());
    const used = new Set<string>();
    for (const node of flow.nodes) {
      const model = expectedModel(flow, node);
      expect(requests.get(node.name)!.model, node.name).toBe(model);
      expect(report.results[node.name]!.model, node.name).toBe(model);
      used.add(model);
    }
    expect([...used].sort()).toEqual(['gpt-3.5-turbo', 'gpt-4-0613', 'gpt-4-turbo']);

    // Order-only edges: `unknown` waits for `kb-add` (a round later than its own dependencies allow)
    // and `actor-final` for both, yet neither reads their answers.
    const rounds = roundsByNode(flow, server);
    const waits = flow.nodes.filter((node) => (node.after ?? []).length > 0);
    expect(waits.map((node) => node.name)).toEqual(['unknown', 'actor-final']);
    for (const node of waits)
      for (const earlier of node.after!) {
        expect(rounds.get(node.name)!, `${node.name} after ${earlier}`).toBeGreaterThan(rounds.get(earlier)!);
        const texts = requests.get(node.name)!.messages.map((message) => message.content);
        expect(texts.join('\n')).not.toContain(`answer of ${earlier} `);
      }
    const unknownDeps = flow.nodes.find((node) => node.name === 'unknown')!.dependencies!;
    // Its dependencies alone would have let it run alongside kb-add.
    expect(Math.max(...unknownDeps.map((dep) => rounds.get(dep)!))).toBeLessThan(rounds.get('kb-add')!);

    // `reflect` is composed as separate messages: the flow's system prompt, the manual, the last
    // steps of the history, its dependencies' turns, its prompt last.
    const reflect = requests.get('reflect')!.messages;
    expect(reflect[0]).toEqual({ role: 'system', content: flow.config.system });
    expect(reflect[1]).toEqual({ role: 'system', content: `Instruction manual:\n${flow.database.manual}` });
    expect(reflect.slice(2, 6)).toEqual(flow.database.history);
    expect(reflect.at(-2)).toEqual({ role: 'assistant', content: 'answer of obs_last_act from gpt-4-0613' });
    expect(reflect.at(-1)!.content).toMatch(/^Consider how the player reached the current state/);
    expect(reflect.at(-1)!.content).toContain("the top subgoal 'Collect wood'");
    // The actor's own system prompt replaces the flow's.
    const actor = flow.nodes.find((node) => node.name === 'actor-final')!;
    expect(requests.get('actor-final')!.messages[0]).toEqual({ role: 'system', content: actor.system });
    expect(requests.get('actor-final')!.messages.filter((m) => m.role === 'system')).toHaveLength(1);
  });

  it('draws the order-only edges dashed in DOT and Mermaid', async () => {
    const dot = await runCli(['export', 'examples/crafter-planner.flow.json', '--format', 'dot']);
    expect(dot.code).toBe(0);
    expect(dot.stdout.match(/style=dashed, ?arrowhead=empty/g)).toHaveLength(3);
    const mermaid = await runCli(['export', 'examples/crafter-planner.flow.json', '--format', 'mermaid']);
    expect(mermaid.code).toBe(0);
    expect(mermaid.stdout.match(/-\.->/g)).toHaveLength(3);
  });
});
