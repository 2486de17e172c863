/** Small helpers the engine tests share: graphs from node lists, and fixture files. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { graphFileSchema, type GraphConfig, type NodeSpecInput } from '../../src/graph/schema.js';
import { StaticGraph } from '../../src/graph/view.js';
import { Script, ScriptedModel, type ScriptFile } from '../../src/llm/scripted.js';
import type { ModelSet } from '../../src/llm/types.js';

/** A static graph of `nodes` with `config` over the defaults. */
export function graphOf(
  nodes: NodeSpecInput[],
  config: Partial<GraphConfig> = {},
  name = 'test',
): StaticGraph {
  return new StaticGraph(graphFileSchema.parse({ name, nodes, config }));
}

/** A graph fixture from test/fixtures/engine/NAME.autogram.json. */
export function fixture(name: string): StaticGraph {
  const path = fileURLToPath(new URL(`../fixtures/engine/${name}.autogram.json`, import.meta.url));
  return new StaticGraph(graphFileSchema.parse(JSON.parse(readFileSync(path, 'utf8'))));
}

/** One scripted model per role sharing `script` (rules match against the joined prompt text). */
export function scriptedModels(script: ScriptFile): ModelSet {
  const shared = new Script(script, 'test-script');
  return {
    chatbot: new ScriptedModel(shared, 'chatbot'),
    classifier: new ScriptedModel(shared, 'classifier'),
    userbot: new ScriptedModel(shared, 'userbot'),
    embedder: new ScriptedModel(shared, 'embedder'),
  };
}

/** Models for graphs that never call one: any call fails the test with the prompt it got. */
export const noModels: ModelSet = scriptedModels({ rules: [] });
