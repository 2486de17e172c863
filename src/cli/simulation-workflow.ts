/**
 * `simulate N --database`: each simulated conversation a durable workflow (DBOS) on the rate-limited
 * `simulations` queue, taken by the command's own process and by every `meta-agent worker`, so that
 * the conversations of a large simulation are spread over machines and never started faster than the
 * model's API allows. Its id is the simulation's id and the conversation's number, so a conversation
 * that finished is never simulated again: the command run again with the same `--simulation` gets its
 * recorded result (DBOS keeps it as the workflow's output), and a dead worker's conversation is taken
 * up by a live process (the reaper, durable/runtime.ts) and simulated from its start.
 *
 * A conversation samples from a random source of its own (engine/simulate.ts conversationRandom), so
 * it samples the same wherever and whenever it runs. Its input names the graph by an absolute path
 * every process that takes conversations can read, with the digest of the file as the simulation
 * began: a process that finds another file there refuses the conversation rather than mix graphs.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { conversationRandom, simulateConversations } from '../engine/simulate.js';
import { UserError } from '../errors.js';
import type { UsageTotals } from '../llm/usage.js';
import { openAgent } from './open-agent.js';
import type { GoalLoopOptionValues, ModelOptionValues } from './options.js';
import { finishedOf, type FinishedConversation } from './simulation-report.js';

/** What one conversation of a durable simulation is given. JSON. */
export interface SimulationInput {
  /** The simulation's id (`--simulation`). */
  simulation: string;
  /** This conversation's number in it, from 1. */
  index: number;
  /** The graph file's absolute path. */
  graph: string;
  /** The digest of the graph file as the simulation began (graphDigest). */
  digest: string;
  seed: number;
  turns: number;
  /** Model options (modelOptionsToKeep): never a key, each process reads its own environment's. */
  models: ModelOptionValues;
  selfReferential: boolean;
  goalLoop: GoalLoopOptionValues;
}

/** A conversation's result as the workflow records it: the conversation and the model use it cost. */
export interface SimulatedResult extends FinishedConversation {
  usage: UsageTotals;
}

/** The digest a simulation records of its graph file. */
export async function graphDigest(path: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(path))
    .digest('hex')
    .slice(0, 16);
}

/** The workflow id of conversation `index` of the simulation `simulation`. */
export function conversationId(simulation: string, index: number): string {
  return `simulate:${simulation}:${index}`;
}

async function simulateOne(input: SimulationInput): Promise<SimulatedResult> {
  if ((await graphDigest(input.graph)) !== input.digest)
    throw new UserError(
      `${input.graph} is not the graph file simulation "${input.simulation}" began with`,
      1,
      'every process that takes conversations must read the same graph file at the same path',
    );
  const agent = await openAgent(input.graph, input.models, {
    selfReferential: input.selfReferential,
    goalLoop: input.goalLoop,
    quiet: true,
  });
  try {
    const rng = conversationRandom(input.seed, input.index);
    const report = await simulateConversations(agent.interpreter, { count: 1, turns: input.turns, rng });
    return { ...finishedOf(report), usage: agent.meter.total() };
  } finally {
    await agent.dispose();
  }
}

/** The conversation workflow; registered at import, before DBOS launches. */
export const simulationWorkflow = DBOS.registerWorkflow(simulateOne, { name: 'simulate.conversation' });

/** Puts conversation `input.index` on the `simulations` queue, or finds it there or finished. */
export function enqueueConversation(input: SimulationInput) {
  return DBOS.startWorkflow(simulationWorkflow, {
    workflowID: conversationId(input.simulation, input.index),
    queueName: 'simulations',
  })(input);
}

/** What the simulation `simulation` was begun with (its first conversation's input), if it was. */
export async function simulationBegun(simulation: string): Promise<SimulationInput | undefined> {
  const [first] = await DBOS.listWorkflows({
    workflow_id_prefix: `simulate:${simulation}:`,
    limit: 1,
    loadInput: true,
  });
  return first?.input?.[0] as SimulationInput | undefined;
}
