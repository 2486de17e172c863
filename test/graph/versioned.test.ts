import { describe, expect, it } from 'vitest';
import { GraphEditError, type EditRecord } from '../../src/graph/edit.js';
import { graphFileSchema, type NodeSpecInput } from '../../src/graph/schema.js';
import { VersionedGraph } from '../../src/graph/versioned.js';

function tutor(extra: NodeSpecInput[] = []): VersionedGraph {
  return new VersionedGraph(
    graphFileSchema.parse({
      name: 'tutor',
      nodes: [
        {
          name: 'ask',
          action: 'chat',
          instruction: 'Ask a question',
          transitions: ['right', 'wrong'],
          transitionQuestion: 'Is the answer correct?',
          transitionChoices: ['yes', 'no'],
        },
        { name: 'right', action: 'chat', instruction: 'Praise', transitions: ['ask'] },
        { name: 'wrong', action: 'chat', instruction: 'Explain', transitions: ['ask'] },
        ...extra,
      ],
    }),
  );
}

const by = { by: 'editor' };

describe('VersionedGraph edits', () => {
  it('adds a node as version 1 and records who made it, and when', () => {
    const graph = tutor();
    const record = graph.apply(
      { op: 'add', node: { name: 'hint', action: 'chat', transitions: ['ask'] } },
      by,
    )!;
    expect(graph.version).toBe(1);
    expect(graph.get('hint')?.action).toBe('chat');
    expect(record).toMatchObject({ version: 1, by: 'editor', op: 'add', name: 'hint', before: null });
    expect(record.after).toMatchObject({ name: 'hint', transitions: ['ask'] });
    expect(Date.parse(record.at)).not.toBeNaN();
  });

  it('updates a node with a patch, keeping the fields the patch leaves out', () => {
    const graph = tutor();
    graph.apply({ op: 'update', name: 'right', patch: { instruction: 'Praise warmly' } }, by);
    expect(graph.get('right')).toMatchObject({ instruction: 'Praise warmly', transitions: ['ask'] });
  });

  it('adds a transition together with its choice', () => {
    const graph = tutor([{ name: 'hint', action: 'chat', transitions: ['ask'] }]);
    graph.apply({ op: 'add-transition', from: 'ask', to: 'hint', choice: 'unsure' }, by);
    expect(graph.get('ask')).toMatchObject({
      transitions: ['right', 'wrong', 'hint'],
      transitionChoices: ['yes', 'no', 'unsure'],
    });
  });

  it('removes a node nothing leads to', () => {
    const graph = tutor([{ name: 'spare', action: 'chat', transitions: ['ask'] }]);
    graph.apply({ op: 'remove', name: 'spare' }, by);
    expect(graph.get('spare')).toBeUndefined();
    expect(graph.nodes()).toHaveLength(3);
  });

  it('treats an edit that changes nothing as no new version', () => {
    const graph = tutor();
    expect(graph.apply({ op: 'update', name: 'right', patch: { instruction: 'Praise' } }, by)).toBeNull();
    expect(graph.version).toBe(0);
  });
});

describe('VersionedGraph refusals', () => {
  const refusals: [string, unknown, RegExp][] = [
    [
      'a transition to nowhere',
      { op: 'add', node: { name: 'x', action: 'chat', transitions: ['nowhere'] } },
      /transition to missing node "nowhere"/,
    ],
    [
      'a duplicate name',
      { op: 'add', node: { name: 'ask', action: 'chat' } },
      /a node with that name already exists/,
    ],
    [
      'an invalid name',
      { op: 'add', node: { name: 'quit', action: 'chat', transitions: ['ask'] } },
      /invalid node name/,
    ],
    [
      'an unknown action',
      { op: 'add', node: { name: 'x', action: 'chatt' } },
      /action: invalid value "chatt"/,
    ],
    [
      'a misspelt field',
      { op: 'update', name: 'ask', patch: { instrution: 'x' } },
      /unknown field "instrution"/,
    ],
    ['an unknown node', { op: 'update', name: 'rigth', patch: { notes: 'x' } }, /no such node/],
    ['removing a node others lead to', { op: 'remove', name: 'right' }, /"ask" still leads to it/],
    ['removing the start node', { op: 'remove', name: 'ask' }, /it is the start node/],
    [
      'renaming a node others lead to',
      { op: 'update', name: 'wrong', patch: { name: 'incorrect' } },
      /still leads to it/,
    ],
    [
      'a transition without its choice',
      { op: 'add-transition', from: 'ask', to: 'right' },
      /needs its choice/,
    ],
    ['a malformed edit', { op: 'delete', name: 'ask' }, /invalid edit/],
  ];
  for (const [what, edit, message] of refusals)
    it(`refuses ${what} and leaves the graph untouched`, () => {
      const graph = tutor();
      const before = graph.toJSON();
      expect(() => graph.apply(edit, by)).toThrow(GraphEditError);
      expect(() => graph.apply(edit, by)).toThrow(message);
      expect(graph.toJSON()).toEqual(before);
      expect(graph.version).toBe(0);
    });

  it('refuses to remove a protected node (the running one, or one a call returns to)', () => {
    const graph = tutor([{ name: 'spare', action: 'chat', transitions: ['ask'] }]);
    expect(() =>
      graph.apply({ op: 'remove', name: 'spare' }, { by: 'x', protect: new Set(['spare']) }),
    ).toThrow(/it is running, or a function call returns to it/);
  });

  it('does not blame an edit for errors the graph already had', () => {
    const graph = tutor([{ name: 'broken', action: 'chat', transitions: ['gone'] }]);
    expect(graph.lint().some((f) => f.severity === 'error')).toBe(true);
    expect(graph.apply({ op: 'update', name: 'right', patch: { notes: 'fine' } }, by)?.version).toBe(1);
  });

  it('refuses an edit that adds a second copy of an existing error', () => {
    const graph = tutor([{ name: 'broken', action: 'chat', transitions: ['gone'] }]);
    expect(() => graph.apply({ op: 'update', name: 'right', patch: { transitions: ['gone'] } }, by)).toThrow(
      /right: transition to missing node "gone"/,
    );
  });

  it('carries the lint findings that caused a refusal', () => {
    const graph = tutor();
    try {
      graph.apply({ op: 'update', name: 'ask', patch: { transitionChoices: ['yes'] } }, by);
      expect.unreachable();
    } catch (error) {
      expect((error as GraphEditError).findings).toEqual([
        expect.objectContaining({ node: 'ask', message: 'has 2 transitions but 1 transitionChoices' }),
      ]);
    }
  });

  it('refuses to grow past selfEditLimits.maxNodes', () => {
    const graph = new VersionedGraph(
      graphFileSchema.parse({
        config: { selfEditLimits: { maxNodes: 1, editsPerTurn: 5 } },
        nodes: [{ name: 'a', action: 'chat', transitions: ['a'] }],
      }),
    );
    expect(() =>
      graph.apply({ op: 'add', node: { name: 'b', action: 'chat', transitions: ['a'] } }, by),
    ).toThrow(/selfEditLimits\.maxNodes is 1/);
  });
});

describe('VersionedGraph history', () => {
  function edited(): VersionedGraph {
    const graph = tutor();
    graph.apply({ op: 'add', node: { name: 'hint', action: 'chat', transitions: ['ask'] } }, { by: 'plan' });
    graph.apply({ op: 'add-transition', from: 'ask', to: 'hint', choice: 'unsure' }, { by: 'plan' });
    graph.apply(
      { op: 'update', name: 'right', patch: { instruction: 'Praise warmly', notes: 'v3' } },
      { by: 'tune' },
    );
    return graph;
  }

  it('tells listeners about each applied edit, after it applies', () => {
    const graph = tutor();
    const seen: [number, number][] = [];
    graph.onEdit((record, g) => seen.push([record.version, g.version]));
    graph.apply({ op: 'update', name: 'right', patch: { notes: 'n' } }, by);
    expect(() => graph.apply({ op: 'remove', name: 'right' }, by)).toThrow();
    expect(seen).toEqual([[1, 1]]);
  });

  it('lists the edits in order', () => {
    expect(
      edited()
        .history()
        .map((r) => [r.version, r.by, r.op, r.name]),
    ).toEqual([
      [1, 'plan', 'add', 'hint'],
      [2, 'plan', 'add-transition', 'ask'],
      [3, 'tune', 'update', 'right'],
    ]);
  });

  it('gives the graph as it was at any version', () => {
    const graph = edited();
    expect(graph.fileAt(0).nodes.map((n) => n.name)).toEqual(['ask', 'right', 'wrong']);
    expect(graph.fileAt(1).nodes.map((n) => n.name)).toEqual(['ask', 'right', 'wrong', 'hint']);
    expect(graph.fileAt(3)).toEqual(graph.toFile());
    expect(() => graph.fileAt(4)).toThrow(/no version 4; this graph has versions 0 to 3/);
  });

  it('diffs two versions node by node, naming the changed fields', () => {
    const graph = edited();
    expect(graph.diff(0, 3).map(({ name, change, fields }) => ({ name, change, fields }))).toEqual([
      { name: 'ask', change: 'changed', fields: ['transitions', 'transitionChoices'] },
      { name: 'right', change: 'changed', fields: ['instruction', 'notes'] },
      { name: 'hint', change: 'added', fields: undefined },
    ]);
    expect(graph.diff(3, 0).find((c) => c.name === 'hint')?.change).toBe('removed');
  });

  it('reverts an edit by applying its inverse as a new version', () => {
    const graph = edited();
    const record = graph.revert(3, 'undo');
    expect(record).toMatchObject({ version: 4, op: 'revert', reverts: 3, name: 'right', by: 'undo' });
    expect(graph.get('right')?.instruction).toBe('Praise');
    expect(graph.get('right')?.notes).toBeUndefined();
    expect(graph.diff(2, 4)).toEqual([]);
  });

  it('refuses to revert an edit a later one built on', () => {
    const graph = edited();
    expect(() => graph.revert(1, 'undo')).toThrow(/cannot revert version 1: "ask" still leads to it/);
    graph.revert(2, 'undo');
    graph.revert(1, 'undo');
    expect(graph.diff(0, graph.version).map((c) => c.name)).toEqual(['right']);
  });

  it('refuses to revert a change that was changed again later', () => {
    const graph = edited();
    graph.apply({ op: 'update', name: 'right', patch: { notes: 'v4' } }, by);
    expect(() => graph.revert(3, 'undo')).toThrow(/changed again in version 4/);
  });

  it('restores a removed node at its old position', () => {
    const graph = tutor([
      { name: 'spare', action: 'chat', transitions: ['ask'] },
      { name: 'end', action: 'chat' },
    ]);
    graph.apply({ op: 'remove', name: 'spare' }, by);
    graph.revert(1, 'undo');
    expect(graph.nodes().map((n) => n.name)).toEqual(['ask', 'right', 'wrong', 'spare', 'end']);
  });

  it('survives a JSON round trip and keeps working in the resumed copy', () => {
    const graph = edited();
    const resumed = VersionedGraph.fromJSON(JSON.parse(JSON.stringify(graph.toJSON())));
    expect(resumed.version).toBe(3);
    expect(resumed.toFile()).toEqual(graph.toFile());
    expect(resumed.history()).toEqual(graph.history());
    resumed.revert(3, 'undo');
    expect(resumed.get('right')?.instruction).toBe('Praise');
  });

  it('refuses a snapshot that is not a graph history', () => {
    expect(() => VersionedGraph.fromJSON({ base: {} }, 'state.json')).toThrow(
      /state\.json: not a valid graph history/,
    );
    const json = edited().toJSON();
    const shuffled = { ...json, edits: [json.edits[1]!, json.edits[0]!] as EditRecord[] };
    expect(() => VersionedGraph.fromJSON(shuffled)).toThrow(/out of order/);
  });
});
