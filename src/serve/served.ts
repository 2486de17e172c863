/**
 * What a server serves: graphs by name, each with the models its file (and the command line) chose.
 * Agents (autograms, AutoGRAMS spreadsheets) hold conversations; flows run passes.
 */
import type { FlowFile } from '../flow/schema.js';
import type { GraphFile } from '../graph/schema.js';
import type { LanguageModel, ModelSet } from '../llm/types.js';

export interface ServedAgent {
  kind: 'agent';
  name: string;
  file: GraphFile;
  /** Not metered: each conversation meters them on its own events. */
  models: ModelSet;
  /** The folder of the graph file: where its flow nodes find their flows. */
  folder: string;
}

export interface ServedFlow {
  kind: 'flow';
  name: string;
  flow: FlowFile;
  models: ModelSet;
  /** The models its nodes name, by the name they give (flow/runner.ts FlowRunOptions.nodeModels). */
  nodeModels?: ReadonlyMap<string, LanguageModel>;
  folder: string;
}

export type Served = ServedAgent | ServedFlow;
