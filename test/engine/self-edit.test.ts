import { describe, expect, it } from 'vitest';
import { Interpreter } from '../../src/engine/interpreter.js';
import { graphFileSchema } from '../../src/graph/schema.js';
import { VersionedGraph } from '../../src/graph/versioned.js';
import { noModels } from '../support/agents.js';

describe('a graph edited while it runs', () => {
  it('follows a node added by a code node at the very next step (Appendix H)', async () => {
    const graph = new VersionedGraph(
      graphFileSchema.parse({
        name: 'self',
        nodes: [
          { name: 'start1', action: 'code', instruction: "topic = 'cats'", transitions: ['design'] },
          {
            name: 'design',
            action: 'global_function',
            instruction: 'next = add_talk(topic)',
            transitions: ['$next'],
          },
          {
            name: 'add_talk(subject)',
            action: 'code',
            instruction:
              "self.add({ name: 'talk_' + subject, action: 'chat_exact', instruction: 'Let us talk about ' + subject + '.', transitions: ['quit'] }); 'talk_' + subject",
            transitions: ['return'],
          },
        ],
      }),
    );
    const protectedAtEdit: string[][] = [];
    const add = (node: unknown) => {
      const protect = agent.protectedNodes();
      protectedAtEdit.push(protect);
      graph.apply({ op: 'add', node }, { by: 'test', protect: new Set(protect) });
    };
    const agent: Interpreter = await Interpreter.create({
      graph,
      models: noModels,
      host: { self: { functions: { add } } },
    });
    try {
      const { reply, state } = await agent.reply(undefined);
      expect(reply).toBe('Let us talk about cats.');
      expect(graph.version).toBe(1);
      expect(state.graphVersion).toBe(1);
      // The code ran inside add_talk(…), called from design: both must survive any edit made there.
      expect(protectedAtEdit).toEqual([['design', 'add_talk(subject)']]);
      expect(agent.protectedNodes()).toEqual([]);
      expect(agent.protectedNodes(state)).toEqual(['talk_cats']);
    } finally {
      agent.dispose();
    }
  });
});
