import { describe, expect, it } from 'vitest';
import { Interpreter } from '../../src/engine/interpreter.js';
import { conversationGraph } from '../../src/engine/self-mode.js';
import { DEFAULT_SELF_EDIT_LIMITS, type NodeSpecInput } from '../../src/graph/schema.js';
import { VersionedGraph } from '../../src/graph/versioned.js';
import { StaticGraph } from '../../src/graph/view.js';
import { converse, fileOf, noModels, noScript } from '../support/agents.js';

const GROWER: NodeSpecInput[] = [
  { name: 'start1', action: 'code', instruction: 'turn = 0', transitions: ['grow'] },
  {
    name: 'grow',
    action: 'code',
    instruction:
      "turn += 1; next = 'said_' + turn; self.addNode({ name: next, action: 'chat_exact', instruction: 'Turn ' + turn + '.', transitions: ['grow'] })",
    transitions: ['$next'],
  },
];

describe('self-referential mode in the interpreter', () => {
  it('lends self to code nodes when the graph config switches the mode on, and saves the graph in the state', async () => {
    const graph = new VersionedGraph(fileOf(GROWER, { selfReferential: true }));
    const { said, state } = await converse(graph, noScript, [undefined, 'again', 'and again']);
    expect(said).toEqual(['Turn 1.', 'Turn 2.', 'Turn 3.']);
    expect(graph.nodes().map((n) => n.name)).toEqual(['start1', 'grow', 'said_1', 'said_2', 'said_3']);
    expect(graph.history().map((r) => [r.version, r.by, r.op, r.name])).toEqual([
      [1, 'grow', 'add', 'said_1'],
      [2, 'grow', 'add', 'said_2'],
      [3, 'grow', 'add', 'said_3'],
    ]);
    expect(state.graph).toEqual(graph.toJSON());
    expect(state.graphVersion).toBe(3);
  });

  it('switches the mode on from the selfReferential option (the --self-referential flag)', async () => {
    const graph = new VersionedGraph(fileOf(GROWER));
    const { said } = await converse(graph, noScript, [undefined], { selfReferential: true });
    expect(said).toEqual(['Turn 1.']);
  });

  it('puts every edit on the event stream as it happens, between the node entered and the transition it enables', async () => {
    const graph = new VersionedGraph(fileOf(GROWER, { selfReferential: true }));
    const { events } = await converse(graph, noScript, [undefined]);
    const types = events.map((e) => (e.type === 'node.entered' ? `enter ${e.node}` : e.type));
    const edited = types.indexOf('graph.edited');
    expect(types[edited - 1]).toBe('enter grow');
    expect(events[edited]).toEqual({
      type: 'graph.edited',
      version: 1,
      by: 'grow',
      op: 'add',
      nodes: ['said_1'],
      totalNodes: 3,
    });
    expect(events.slice(edited).find((e) => e.type === 'transition')).toMatchObject({
      from: 'grow',
      to: 'said_1',
      kind: 'variable',
    });
  });

  it('without the mode, self is absent and code that uses it fails naming the mode', async () => {
    const graph = new StaticGraph(fileOf(GROWER));
    const failure = await converse(graph, noScript, [undefined]).catch((error: unknown) => error);
    expect((failure as Error).message).toBe(
      'node "grow": ReferenceError: self is not defined: `self` exists only in self-referential mode (line 1)',
    );
    expect((failure as { hint?: string }).hint).toMatch(
      /"selfReferential": true in the graph config, or --self-referential/,
    );
    const probe = new StaticGraph(
      fileOf([
        { name: 'start1', action: 'code', instruction: 'kind = typeof self', transitions: ['say'] },
        { name: 'say', action: 'chat_exact', instruction: '$kind' },
      ]),
    );
    expect((await converse(probe, noScript, [undefined])).said).toEqual(['undefined']);
  });

  it('runs a static graph as a versioned copy, which the interpreter exposes', async () => {
    const graph = new StaticGraph(fileOf(GROWER, { selfReferential: true }));
    const agent = await Interpreter.create({ graph, models: noModels });
    try {
      expect((await agent.reply(undefined)).reply).toBe('Turn 1.');
      expect(agent.graph).toBeInstanceOf(VersionedGraph);
      expect(agent.graph.get('said_1')).toBeDefined();
      expect(graph.get('said_1')).toBeUndefined();
    } finally {
      agent.dispose();
    }
  });

  it('lets the graph handle a refused edit: removing the node a running call returns to', async () => {
    const graph = new VersionedGraph(
      fileOf(
        [
          { name: 'start1', action: 'function', instruction: 'outcome = prune()', transitions: ['report'] },
          {
            name: 'prune()',
            action: 'code',
            instruction: "try { self.removeNode('start1'); 'removed' } catch (e) { e.message }",
            transitions: ['return'],
          },
          { name: 'report', action: 'chat_exact', instruction: '$outcome', transitions: ['quit'] },
        ],
        { selfReferential: true },
      ),
    );
    const { said } = await converse(graph, noScript, [undefined]);
    expect(said).toEqual(['cannot remove "start1": it is running, or a function call returns to it']);
    expect(graph.version).toBe(0);
  });

  it('refuses removing the running node itself', async () => {
    const graph = new VersionedGraph(
      fileOf(
        [
          { name: 'start1', action: 'chat_exact', instruction: 'Hi.', transitions: ['cut'] },
          {
            name: 'cut',
            action: 'code',
            instruction: "self.updateNode('start1', { transitions: ['quit'] }); self.removeNode('cut')",
            transitions: ['start1'],
          },
        ],
        { selfReferential: true },
      ),
    );
    const failure = await converse(graph, noScript, [undefined, 'go']).catch((error: unknown) => error);
    expect((failure as Error).message).toMatch(
      /^node "cut": Error: cannot remove "cut": it is running, or a function call returns to it/,
    );
    expect(graph.get('cut')).toBeDefined();
  });

  it('counts edits per turn: a new reply may edit again, a runaway turn stops with a clear error', async () => {
    const limits = { selfEditLimits: { ...DEFAULT_SELF_EDIT_LIMITS, editsPerTurn: 2, maxNodes: 500 } };
    const twice = new VersionedGraph(fileOf(GROWER, { selfReferential: true, ...limits }));
    expect((await converse(twice, noScript, [undefined, 'a', 'b', 'c'])).said).toHaveLength(4);

    const runaway = new VersionedGraph(
      fileOf(
        [
          {
            name: 'start1',
            action: 'code',
            instruction:
              "for (let i = 0; ; i++) self.addNode({ name: 'n' + i, action: 'chat', transitions: ['start1'] })",
            transitions: ['start1'],
          },
        ],
        { selfReferential: true, ...limits },
      ),
    );
    const failure = await converse(runaway, noScript, [undefined]).catch((error: unknown) => error);
    expect((failure as Error).message).toMatch(
      /^node "start1": Error: self\.addNode refused: this turn already tried 2 edits, the most config\.selfEditLimits\.editsPerTurn allows/,
    );
    expect(runaway.version).toBe(2);
  });

  it('stops a graph that grows past the node limit', async () => {
    const graph = new VersionedGraph(
      fileOf(GROWER, {
        selfReferential: true,
        selfEditLimits: { ...DEFAULT_SELF_EDIT_LIMITS, editsPerTurn: 20, maxNodes: 3 },
      }),
    );
    const failure = await converse(graph, noScript, [undefined, 'more']).catch((error: unknown) => error);
    expect((failure as Error).message).toMatch(/cannot add node "said_2": the graph already has 3 nodes/);
  });

  it('saves the graph in the state a host function call returns', async () => {
    const graph = new VersionedGraph(
      fileOf(
        [
          { name: 'start1', action: 'chat_exact', instruction: 'Hi.' },
          {
            name: 'learn(word)',
            action: 'code',
            instruction:
              "self.addNode({ name: word, action: 'chat_exact', instruction: word, transitions: ['start1'] })",
            transitions: ['return'],
          },
        ],
        { selfReferential: true },
      ),
    );
    const agent = await Interpreter.create({ graph, models: noModels });
    try {
      const { value, state } = await agent.applyFn('learn', ['hello']);
      expect(value).toBe('hello');
      expect(VersionedGraph.fromJSON(state.graph).get('hello')).toBeDefined();
    } finally {
      agent.dispose();
    }
  });

  it('lends code nodes the host namespaces beside self, through the one door', async () => {
    const graph = new VersionedGraph(
      fileOf(
        [
          {
            name: 'count(word)',
            action: 'code',
            instruction: '[self.nodes().length, tools.lengthOf(word), slow.upper(word)]',
            transitions: ['return'],
          },
        ],
        { selfReferential: true },
      ),
    );
    const host = {
      tools: { functions: { lengthOf: (word: string) => word.length } },
      slow: { functions: { upper: async (word: string) => word.toUpperCase() }, awaited: true },
      self: { functions: { nodes: () => ['an impostor'] } },
    };
    const agent = await Interpreter.create({ graph, models: noModels, host });
    try {
      const { value } = await agent.applyFn('count', ['four']);
      // self is the graph's own API (one node), not the host's namespace of the same name.
      expect(value).toEqual([1, 4, 'FOUR']);
    } finally {
      agent.dispose();
    }
  });
});

describe('the graph a conversation runs on', () => {
  const file = fileOf(GROWER);

  it('is the file, static, when the mode is off and the state holds no graph', () => {
    expect(conversationGraph(file, undefined)).toBeInstanceOf(StaticGraph);
  });

  it('is the file, versioned, when the config or the flag switches the mode on', () => {
    expect(conversationGraph(fileOf(GROWER, { selfReferential: true }), undefined)).toBeInstanceOf(
      VersionedGraph,
    );
    expect(conversationGraph(file, undefined, { selfReferential: true })).toBeInstanceOf(VersionedGraph);
  });

  it('is the graph saved in the state, with the nodes the agent wrote, once the agent edited it', async () => {
    const first = new VersionedGraph(fileOf(GROWER, { selfReferential: true }));
    const { state } = await converse(first, noScript, [undefined, 'again']);
    const resumed = conversationGraph(file, structuredClone(state));
    expect(resumed).toBeInstanceOf(VersionedGraph);
    expect(resumed.nodes().map((n) => n.name)).toEqual(['start1', 'grow', 'said_1', 'said_2']);
    expect((resumed as VersionedGraph).history()).toHaveLength(2);
    const agent = await Interpreter.create({ graph: resumed, models: noModels });
    try {
      const next = await agent.reply('once more', state);
      expect(next.reply).toBe('Turn 3.');
      expect(VersionedGraph.fromJSON(next.state.graph).version).toBe(3);
    } finally {
      agent.dispose();
    }
  });

  it("takes the file's config, as the command line overrode it, over the one saved with the edits", async () => {
    const first = new VersionedGraph(fileOf(GROWER, { selfReferential: true }));
    const { state } = await converse(first, noScript, [undefined]);
    const renamed = fileOf(GROWER, { selfReferential: true, agentName: 'Zed' });
    const resumed = conversationGraph(renamed, structuredClone(state)) as VersionedGraph;
    expect(resumed.config.agentName).toBe('Zed');
    expect(resumed.nodes().map((n) => n.name)).toContain('said_1');
    expect(resumed.toJSON().base.config.agentName).toBe('Zed');
  });

  it('names the state when its graph is not a valid history', () => {
    const state = { graph: { format: 'nonsense' } } as never;
    expect(() => conversationGraph(file, state, { source: 'talk.json' })).toThrow(
      /talk\.json \(graph\): not a valid graph history/,
    );
  });
});
