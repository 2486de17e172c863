/**
 * The routes behind the page, over HTTP on the built CLI's `meta-agent serve`: the served graphs, each
 * drawn with the export's layout, a conversation's own graph (a self-editing agent's current version),
 * its versions and what each changed, and the page itself, which needs no key while the API does.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type ServeProcess } from '../support/serve.js';

const FIXTURES = 'test/fixtures/serve';
const KEY = 'graph-routes-key';
/** Past the 5,000 boxes Graphviz is asked to lay out. */
const TOO_MANY_NODES = 5001;

describe('the graph routes of meta-agent serve', () => {
  let data: string;
  let serve: ServeProcess;

  beforeAll(async () => {
    data = await mkdtemp(join(tmpdir(), 'meta-agent-graph-routes-'));
    const huge = join(data, 'huge.autogram.json');
    await writeFile(huge, JSON.stringify(chainGraph('huge', TOO_MANY_NODES)));
    serve = await startServe(
      [
        `${FIXTURES}/guide.autogram.json`,
        `${FIXTURES}/gardener.autogram.json`,
        'examples/plan-task.flow.json',
        huge,
        ...['--provider', 'scripted', '--script', `${FIXTURES}/page.script.json`],
        ...['--port', '0', '--data', join(data, 'store')],
      ],
      { env: { META_AGENT_API_KEYS: KEY } },
    );
  });

  afterAll(async () => {
    await serve?.stop();
    if (data) await rm(data, { recursive: true, force: true });
  });

  async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const response = await fetch(`${serve.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json', ...headers },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: response.status, json: (await response.json()) as Answer };
  }

  async function conversationWith(graph: string): Promise<string> {
    const { status, json } = await call('POST', '/v1/conversations', { graph });
    expect(status).toBe(201);
    return json.id;
  }

  function say(id: string, graph: string, text: string) {
    const body = { model: graph, messages: [{ role: 'user', content: text }] };
    return call('POST', '/v1/chat/completions', body, { 'X-Conversation-Id': id });
  }

  it('lists what it serves: agents and flows, their size, and which edit themselves', async () => {
    const { status, json } = await call('GET', '/v1/graphs');
    expect(status).toBe(200);
    expect(json.data.map((graph) => [graph.name, graph.kind, graph.nodes, graph.selfReferential])).toEqual([
      ['guide', 'agent', 3, false],
      ['gardener', 'agent', 3, true],
      ['plan-task', 'flow', 7, false],
      ['huge', 'agent', TOO_MANY_NODES, false],
    ]);
    expect(json.data[0]!.description).toBe(
      'A short tour: it asks your name, then a topic, then explains it.',
    );
  });

  it('draws a graph and a flow as the HTML export does: an <svg> with a box and a panel per node', async () => {
    const guide = await call('GET', '/v1/graphs/guide/drawing');
    expect(guide.status).toBe(200);
    expect(guide.json.svg).toMatch(/^<svg\b/);
    expect(guide.json.nodes.map((node) => [node.id, node.name])).toEqual([
      ['ag-node-0', 'welcome'],
      ['ag-node-1', 'ask_topic'],
      ['ag-node-2', 'explain'],
    ]);
    for (const { id } of guide.json.nodes)
      expect(guide.json.svg).toContain(`id="${id.replaceAll('-', '&#45;')}"`);
    expect(guide.json.nodes[0]!.fields[0]).toEqual({
      label: 'Instruction',
      text: 'Welcome the user and ask for their name.',
      searched: true,
    });
    const flow = await call('GET', '/v1/graphs/plan-task/drawing');
    expect(flow.json.kind).toBe('flow');
    expect(flow.json.nodes.find((node) => node.name === 'plan')!.badges).toEqual([
      { text: 'output', kind: 'start' },
    ]);
  });

  it('refuses to draw a graph too large for Graphviz, and says so', async () => {
    const { status, json } = await call('GET', '/v1/graphs/huge/drawing');
    expect(status).toBe(422);
    expect(json.error.code).toBe('graph_too_large');
    expect(json.error.message).toContain('"huge" is too large to draw');
    expect(json.error.message).toContain('the page cannot draw it');
    expect((await call('GET', '/v1/graphs/nothing/drawing')).status).toBe(404);
  });

  it("draws a self-editing agent's conversation at its current version, and lists and diffs its versions", async () => {
    const id = await conversationWith('gardener');
    const before = await call('GET', `/v1/conversations/${id}/drawing`);
    expect([before.json.version, before.json.selfReferential]).toEqual([0, true]);
    expect(before.json.nodes.map((node) => node.name)).toEqual(['greet', 'plant', 'tend']);
    expect((await call('GET', `/v1/conversations/${id}/versions`)).json.data).toEqual([
      { version: 0, op: 'loaded', nodes: [], totalNodes: 3 },
    ]);

    expect((await say(id, 'gardener', 'tomatoes')).status).toBe(200);

    const after = await call('GET', `/v1/conversations/${id}/drawing`);
    expect(after.json.version).toBe(2);
    expect(after.json.nodes.map((node) => node.name)).toEqual(['greet', 'plant', 'tend', 'seedling']);
    const versions = await call('GET', `/v1/conversations/${id}/versions`);
    expect(versions.json.version).toBe(2);
    expect(versions.json.data.map(({ at, ...rest }) => ({ ...rest, timed: at !== undefined }))).toEqual([
      { version: 0, op: 'loaded', nodes: [], totalNodes: 3, timed: false },
      { version: 1, by: 'plant', op: 'add', nodes: ['seedling'], totalNodes: 4, timed: true },
      { version: 2, by: 'plant', op: 'update', nodes: ['plant'], totalNodes: 4, timed: true },
    ]);
    const added = await call('GET', `/v1/conversations/${id}/versions/1/diff`);
    expect(added.json.changes).toEqual([
      {
        name: 'seedling',
        change: 'added',
        after: expect.objectContaining({ instruction: 'Tell the user their seedling has sprouted.' }),
      },
    ]);
    const updated = await call('GET', `/v1/conversations/${id}/versions/2/diff`);
    expect(updated.json.changes[0]).toMatchObject({
      name: 'plant',
      change: 'changed',
      fields: ['transitions'],
      before: { transitions: ['tend'] },
      after: { transitions: ['seedling'] },
    });
    for (const n of ['0', '3', 'two']) {
      const missing = await call('GET', `/v1/conversations/${id}/versions/${n}/diff`);
      expect(missing.status).toBe(404);
      expect(missing.json.error.message).toContain('versions 1 to 2');
    }
  });

  it('answers 404 for the versions of an agent that does not edit itself, saying so', async () => {
    const id = await conversationWith('guide');
    const drawing = await call('GET', `/v1/conversations/${id}/drawing`);
    expect([drawing.json.version, drawing.json.selfReferential]).toEqual([0, false]);
    const { status, json } = await call('GET', `/v1/conversations/${id}/versions`);
    expect(status).toBe(404);
    expect(json.error.code).toBe('not_self_referential');
    expect(json.error.message).toContain('"guide" does not edit itself');
    expect((await call('GET', '/v1/conversations/conv_nobody/drawing')).status).toBe(404);
  });

  it('serves the page with no key, locked to its own script and server; the API behind it needs the key', async () => {
    const page = await fetch(`${serve.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const policy = page.headers.get('content-security-policy') ?? '';
    expect(policy).toMatch(/default-src 'none'/);
    expect(policy).toMatch(/script-src 'sha256-[^']+'/);
    expect(policy).toMatch(/connect-src 'self'/);
    const html = await page.text();
    expect(html).not.toMatch(/<script[^>]+src=|<link\b|@import|url\(\s*['"]?https?:/i);
    expect((await fetch(`${serve.url}/v1/graphs`)).status).toBe(401);
  });
});

/** The fields of the answers these tests read; each route answers some of them. */
interface Answer {
  id: string;
  data: Record<string, unknown>[];
  svg: string;
  kind: string;
  version: number;
  selfReferential: boolean;
  nodes: { id: string; name: string; fields: unknown[]; badges: unknown[] }[];
  changes: unknown[];
  error: { message: string; code: string };
}

/** A graph of `count` chat nodes in a chain, each leading to the next, the last to quit. */
function chainGraph(name: string, count: number) {
  return {
    format: 'meta-agent/autogram@1',
    name,
    nodes: Array.from({ length: count }, (_, i) => ({
      name: `n${i}`,
      action: 'chat_exact',
      instruction: `Step ${i}.`,
      transitions: [i + 1 < count ? `n${i + 1}` : 'quit'],
    })),
  };
}
