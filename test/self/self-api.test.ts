import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SelfCaller } from '../../src/engine/self-api.js';
import { SelfMode } from '../../src/engine/self-mode.js';
import { EventBus, type AgentEvent } from '../../src/events.js';
import {
  DEFAULT_SELF_EDIT_LIMITS,
  graphFileSchema,
  type GraphConfig,
  type NodeSpecInput,
} from '../../src/graph/schema.js';
import { VersionedGraph } from '../../src/graph/versioned.js';
import { Sandbox, SandboxError } from '../../src/sandbox/index.js';
import { fileOf } from '../support/agents.js';

const NODES: NodeSpecInput[] = [
  { name: 'start1', action: 'chat_exact', instruction: 'Hi!', transitions: ['edit'] },
  { name: 'edit', action: 'code', instruction: '', transitions: ['answer'] },
  {
    name: 'answer',
    action: 'chat',
    instruction: 'Answer the user.',
    transitions: ['edit', 'start1'],
    transitionQuestion: 'Does the user want to start over?',
    transitionChoices: ['no', 'yes'],
  },
];

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await Sandbox.create();
});
afterAll(() => sandbox.dispose());

describe('the self API inside the sandbox', () => {
  let graph: VersionedGraph;
  let mode: SelfMode;
  let events: AgentEvent[];
  let caller: SelfCaller | undefined;

  function enable(config: Partial<GraphConfig> = {}): void {
    mode?.dispose();
    graph = new VersionedGraph(fileOf(NODES, config, 'grower'));
    events = [];
    const bus = new EventBus();
    bus.on((event) => events.push(event));
    mode = new SelfMode({ graph, events: bus, caller: () => caller });
    sandbox.expose('self', mode.api);
  }

  /** Runs `code` as the code node `edit` would, returning its value. */
  async function run(code: string): Promise<unknown> {
    return (await sandbox.runCode(code, {}, { node: 'edit' })).value;
  }

  /** Runs `code` expecting it to throw inside, returning the message it caught. */
  async function refusal(code: string): Promise<string> {
    const message = await run(`try { ${code}; 'no error' } catch (e) { e.message }`);
    expect(message).not.toBe('no error');
    return message as string;
  }

  beforeEach(() => {
    caller = { node: 'edit', protect: ['edit'], lastReply: { node: 'answer', text: 'Paris.' } };
    enable();
  });
  afterEach(() => mode.dispose());

  it('adds a node, returns its name, and records a version made by the running node', async () => {
    const name = await run(
      "self.addNode({ name: 'joke', action: 'chat', instruction: 'Tell a joke.', transitions: ['edit'] })",
    );
    expect(name).toBe('joke');
    expect(graph.version).toBe(1);
    expect(graph.get('joke')).toMatchObject({
      action: 'chat',
      instruction: 'Tell a joke.',
      transitions: ['edit'],
    });
    const [record] = graph.history();
    expect(record).toMatchObject({ version: 1, by: 'edit', op: 'add', name: 'joke', before: null });
    expect(record!.after).toMatchObject({ name: 'joke' });
    expect(Date.parse(record!.at)).not.toBeNaN();
  });

  it('emits graph.edited the moment an edit applies, with the node count after it', async () => {
    await run("self.addNode({ name: 'joke', action: 'chat', transitions: ['edit'] })");
    expect(events).toEqual([
      { type: 'graph.edited', version: 1, by: 'edit', op: 'add', nodes: ['joke'], totalNodes: 4 },
    ]);
  });

  it('updates fields of a node and renames it', async () => {
    expect(await run("self.updateNode('answer', { instruction: 'Answer briefly.' })")).toBe('answer');
    expect(graph.get('answer')?.instruction).toBe('Answer briefly.');
    await run("self.addNode({ name: 'spare', action: 'chat', transitions: ['edit'] })");
    expect(await run("self.updateNode('spare', { name: 'reserve' })")).toBe('reserve');
    expect(graph.get('reserve')).toBeDefined();
    expect(events.at(-1)).toMatchObject({ op: 'update', nodes: ['spare', 'reserve'] });
  });

  it('removes a node nothing leads to', async () => {
    await run("self.addNode({ name: 'spare', action: 'chat', transitions: ['edit'] })");
    expect(await run("self.removeNode('spare')")).toBeUndefined();
    expect(graph.get('spare')).toBeUndefined();
    expect(graph.history().map((r) => r.op)).toEqual(['add', 'remove']);
    expect(events.at(-1)).toMatchObject({ op: 'remove', nodes: ['spare'], totalNodes: 3 });
  });

  it('adds a transition, with its choice when the node asks a question', async () => {
    await run("self.addNode({ name: 'joke', action: 'chat', transitions: ['edit'] })");
    await run("self.addTransition('answer', 'joke', 'the user wants a joke')");
    expect(graph.get('answer')).toMatchObject({
      transitions: ['edit', 'start1', 'joke'],
      transitionChoices: ['no', 'yes', 'the user wants a joke'],
    });
  });

  it('reads a node, the node list, names and the last reply', async () => {
    expect(await run("self.getNode('answer')")).toMatchObject({
      name: 'answer',
      action: 'chat',
      transitionQuestion: 'Does the user want to start over?',
    });
    expect(await run('self.nodes()')).toEqual([
      { name: 'start1', action: 'chat_exact' },
      { name: 'edit', action: 'code' },
      { name: 'answer', action: 'chat' },
    ]);
    expect(await run("[self.hasNode('answer'), self.hasNode('nope'), self.hasNode(3)]")).toEqual([
      true,
      false,
      false,
    ]);
    expect(await run('self.lastReply()')).toEqual({ node: 'answer', text: 'Paris.' });
  });

  it('tells valid node names from names the graph rules refuse', async () => {
    const names = [
      'greet_user',
      'f(a, b)',
      'quit',
      'return x',
      '$next',
      'loop.*',
      'a,b',
      ' padded',
      '',
      'f(1)',
      'a\u0000b',
    ];
    expect(await run(`${JSON.stringify(names)}.map((n) => self.isValidName(n))`)).toEqual([
      true,
      true,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(await run('self.isValidName(42)')).toBe(false);
  });

  it('hands the code copies: changing what getNode returned does not change the graph', async () => {
    await run(
      "const node = self.getNode('answer'); node.instruction = 'changed'; node.transitions.push('x')",
    );
    expect(graph.get('answer')?.instruction).toBe('Answer the user.');
    expect(graph.version).toBe(0);
  });

  describe('refuses bad edits with an error the code can catch, leaving the graph untouched', () => {
    afterEach(() => {
      expect(graph.version).toBe(0);
      expect(graph.nodes().map((n) => n.name)).toEqual(['start1', 'edit', 'answer']);
    });

    it('a duplicate name', async () => {
      expect(await refusal("self.addNode({ name: 'answer', action: 'chat' })")).toMatch(
        /cannot add node "answer": a node with that name already exists/,
      );
    });

    it('an invalid name', async () => {
      expect(
        await refusal("self.addNode({ name: 'next.*', action: 'chat', transitions: ['edit'] })"),
      ).toMatch(/adding node "next\.\*" refused: .*invalid node name/);
      expect(await refusal("self.addNode({ name: 'quit', action: 'chat', transitions: ['edit'] })")).toMatch(
        /reserved transition word/,
      );
    });

    it('a transition to nowhere, with a did-you-mean', async () => {
      expect(await refusal("self.addNode({ name: 'joke', action: 'chat', transitions: ['edti'] })")).toMatch(
        /transition to missing node "edti".*did you mean "edit"/,
      );
      expect(await refusal("self.addTransition('answer', 'nowhere', 'lost')")).toMatch(
        /transition to missing node "nowhere"/,
      );
    });

    it('removing the running node', async () => {
      expect(await refusal("self.removeNode('edit')")).toMatch(
        /cannot remove "edit": it is running, or a function call returns to it/,
      );
    });

    it('removing a node a frame of the call stack returns to', async () => {
      caller = { node: 'helper(x)', protect: ['caller_node', 'helper(x)'], lastReply: null };
      mode.dispose();
      graph = new VersionedGraph(
        graphFileSchema.parse({
          name: 'calls',
          nodes: [
            { name: 'start1', action: 'function', instruction: 'y = helper(1)', transitions: ['quit'] },
            { name: 'caller_node', action: 'transition', transitions: ['quit'] },
            { name: 'helper(x)', action: 'code', transitions: ['return'] },
          ],
        }),
      );
      mode = new SelfMode({ graph, events: new EventBus(), caller: () => caller });
      sandbox.expose('self', mode.api);
      expect(await refusal("self.removeNode('caller_node')")).toMatch(
        /cannot remove "caller_node": it is running/,
      );
      expect(graph.version).toBe(0);
      // Put the shared graph back for the check after each refusal.
      mode.dispose();
      enable();
    });

    it('removing a node others still lead to, or the start node', async () => {
      caller = { node: 'edit', protect: [], lastReply: null };
      expect(await refusal("self.removeNode('edit')")).toMatch(
        /cannot remove "edit": "start1", "answer" still lead to it \(change their transitions first\)/,
      );
      expect(await refusal("self.removeNode('start1')")).toMatch(/it is the start node/);
    });

    it('a node that does not exist', async () => {
      expect(await refusal("self.updateNode('anser', { instruction: 'x' })")).toMatch(
        /cannot update "anser": no such node \(did you mean "answer"\?\)/,
      );
      expect(await refusal("self.getNode('nope')")).toMatch(/no node "nope"/);
    });

    it('unknown fields and wrong argument types', async () => {
      expect(await refusal("self.addNode({ name: 'x', action: 'chat', colour: 'red' })")).toMatch(
        /cannot add node "x".*colour/,
      );
      expect(await refusal("self.addNode({ name: 'x', action: 'sing' })")).toMatch(
        /cannot add node "x".*action/,
      );
      expect(await refusal("self.addNode('x')")).toMatch(
        /fields must be an object of node fields, got string "x"/,
      );
      expect(await refusal("self.addNode({ action: 'chat' })")).toMatch(/fields need a string "name"/);
      expect(await refusal("self.updateNode('answer', ['x'])")).toMatch(
        /patch must be an object.*got an array/,
      );
      expect(await refusal('self.removeNode()')).toMatch(/name must be a node name, got undefined/);
      expect(await refusal("self.addTransition('answer', 'edit', 7)")).toMatch(/choice must be a string/);
    });

    it('a transition without its choice from a node that asks a question', async () => {
      expect(await refusal("self.addTransition('answer', 'start1')")).toMatch(/needs its choice/);
    });

    it('an edit when no node is running', async () => {
      caller = undefined;
      expect(await refusal("self.addNode({ name: 'x', action: 'chat', transitions: ['edit'] })")).toMatch(
        /self\.addNode: no node of the graph is running/,
      );
      expect(await refusal('self.lastReply()')).toMatch(/self\.lastReply: no node of the graph is running/);
    });
  });

  it('stops a runaway agent at the edits-per-turn limit, and a new turn may edit again', async () => {
    enable({ selfEditLimits: { ...DEFAULT_SELF_EDIT_LIMITS, editsPerTurn: 3, maxNodes: 500 } });
    const loop =
      "for (let i = 0; ; i++) self.addNode({ name: 'n' + i, action: 'chat', transitions: ['edit'] })";
    const error = await sandbox.runCode(loop, {}, { node: 'edit' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxError);
    expect((error as SandboxError).message).toMatch(
      /node "edit": Error: self\.addNode refused: this turn already tried 3 edits, the most config\.selfEditLimits\.editsPerTurn allows/,
    );
    expect(graph.version).toBe(3);
    mode.beginTurn();
    await run("self.addNode({ name: 'next_turn', action: 'chat', transitions: ['edit'] })");
    expect(graph.version).toBe(4);
  });

  it('stops adding at the node limit', async () => {
    enable({ selfEditLimits: { ...DEFAULT_SELF_EDIT_LIMITS, editsPerTurn: 20, maxNodes: 4 } });
    await run("self.addNode({ name: 'fourth', action: 'chat', transitions: ['edit'] })");
    expect(await refusal("self.addNode({ name: 'fifth', action: 'chat', transitions: ['edit'] })")).toMatch(
      /the graph already has 4 nodes \(config\.selfEditLimits\.maxNodes is 4\)/,
    );
    expect(graph.nodes()).toHaveLength(4);
  });
});
