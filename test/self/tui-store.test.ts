import { describe, expect, it } from 'vitest';
import { Interpreter } from '../../src/engine/interpreter.js';
import { EventBus } from '../../src/events.js';
import { graphFileSchema } from '../../src/graph/schema.js';
import { VersionedGraph } from '../../src/graph/versioned.js';
import { createRunStore } from '../../src/tui/run-store.js';
import { noModels } from '../support/agents.js';

describe('the chat view during a self-editing run', () => {
  it('marks the nodes the agent adds and changes, and counts nodes and versions as the edits happen', async () => {
    const graph = new VersionedGraph(
      graphFileSchema.parse({
        name: 'grower',
        config: { selfReferential: true },
        nodes: [
          {
            name: 'start1',
            action: 'code',
            instruction:
              "self.addNode({ name: 'grown', action: 'chat_exact', instruction: 'I grew.', transitions: ['start1'] }); self.updateNode('start1', { notes: 'grew once' })",
            transitions: ['grown'],
          },
        ],
      }),
    );
    const bus = new EventBus();
    const store = createRunStore(bus, graph, { now: () => 0 });
    const seen: { nodeCount: number; version: number; added?: string[] }[] = [];
    store.subscribe(() => {
      const { nodeCount, version, lastEdit } = store.getState();
      seen.push({ nodeCount, version, ...(lastEdit ? { added: lastEdit.added } : {}) });
    });
    const agent = await Interpreter.create({
      graph,
      models: noModels,
      events: bus,
    });
    try {
      await agent.reply(undefined);
    } finally {
      agent.dispose();
      store.dispose();
    }
    // Each edit reached the view while the run was still going, one version at a time.
    expect(seen).toContainEqual({ nodeCount: 2, version: 1, added: ['grown'] });
    // Marks gather every edit since the user last spoke, so the update keeps the added node marked.
    expect(seen).toContainEqual({ nodeCount: 2, version: 2, added: ['grown'] });
    const state = store.getState();
    expect([...state.known]).toEqual(['start1', 'grown']);
    expect(state.lastEdit).toMatchObject({
      from: 1,
      version: 2,
      by: ['start1'],
      changed: ['start1'],
      added: ['grown'],
    });
  });
});
