/**
 * A flow pass as a durable workflow (DBOS), for flow runs kept in PostgreSQL: `meta-agent flow run
 * --database` carries it in its own process, and when the process carrying it dies, the reaper
 * (runtime.ts) puts it back and any live process (a `meta-agent worker`, or the same command run again)
 * carries it on. Its id is the run's key and the pass's number, so running a pass again attaches to the
 * one in progress, or gives the report it recorded.
 *
 * It is flow/runner.ts's pass, nothing else: the workflow lends the runner two doors. The run is loaded
 * in a step of its own, and saved in a step after every step of the pass; each node of a step is asked
 * in a step of its own, all of a step's nodes started together in the step's order (runner.ts
 * NodeAsker). So a workflow that DBOS runs again after a crash calls the same steps in the same order
 * (the run as the pass began, then each node's recorded answer), replays the commits the runner makes
 * of them, and asks only the nodes whose answers were not recorded: a node already committed in the
 * store is never asked again. Its answer is recorded before the save that commits it, so the store's
 * (run, pass, node) holds what the replay commits again.
 *
 * The workflow's input names the run, the flow as the pass began, and what the pass's model is made
 * from (for the CLI, its model options): never a key, each process uses its own environment's.
 */
import { DBOS } from '@dbos-inc/dbos-sdk';
import { UserError } from '../errors.js';
import { EventBus } from '../events.js';
import type { FlowRunStore } from '../flow/flow-run-store.js';
import { newFlowRunState, type FlowRunState } from '../flow/run-state.js';
import { runFlowPass, type NodeAsker, type PassReport } from '../flow/runner.js';
import type { FlowFile, Json } from '../flow/schema.js';
import type { LanguageModel, ModelSet } from '../llm/types.js';
import type { McpServers } from '../mcp/servers.js';
import { UsageMeter } from '../llm/usage.js';

/** What a durable pass is given. JSON. */
export interface FlowPassInput {
  /** The run's key in the store. */
  key: string;
  /** The pass this workflow runs: the run's pass in progress, or the one after its last. */
  pass: number;
  /** The flow as the pass began (a pass goes on only on the flow it began on). */
  flow: FlowFile;
  /** The pass's `--input` values (checked by whoever starts it). */
  inputs: Record<string, string>;
  /** Nodes asked at once; default the flow's. */
  concurrency?: number;
  /** The model's context window, which prompts are trimmed to fit; default the flow's. */
  contextTokens?: number;
  /** What the host makes the pass's models from (FlowPassHost.models). */
  models: { [key: string]: Json };
}

/** What a process that carries flow passes lends them. */
export interface FlowPassHost {
  flowRuns: FlowRunStore;
  /**
   * The models of a pass, from what it was started with: the built-in roles', and those its nodes name
   * (runner.ts FlowRunOptions.nodeModels).
   */
  models(
    input: FlowPassInput,
  ): Promise<{ models: ModelSet; nodeModels?: ReadonlyMap<string, LanguageModel> }>;
  /** The process's MCP servers, for tool nodes: a process without them refuses a flow that has some. */
  mcp?: McpServers;
}

/** A front end in this process for one pass: the terminal that started it. */
export interface FlowPassFront {
  events: EventBus;
}

let host: FlowPassHost | undefined;
const fronts = new Map<string, FlowPassFront>();

/** Makes this process one that carries flow passes (a process launches DBOS once). */
export function hostFlowPasses(given: FlowPassHost): void {
  host = given;
}

/** Lets the pass `id`, while this process carries it, report to `front`; returns the undo. */
export function attachFlowPassFront(id: string, front: FlowPassFront): () => void {
  fronts.set(id, front);
  return () => {
    if (fronts.get(id) === front) fronts.delete(id);
  };
}

/** The workflow id of the pass `pass` of the run `key`. */
export function flowPassId(key: string, pass: number): string {
  return `flow:${key}:pass:${pass}`;
}

/** The pass a run goes on with: the one in progress, or the one after its last. */
export function nextPass(state: FlowRunState | undefined): number {
  return state?.current?.pass ?? (state?.passes ?? 0) + 1;
}

async function carryPass(input: FlowPassInput): Promise<PassReport> {
  if (!host)
    throw new UserError(
      'this process does not carry flow passes (only `meta-agent worker` and `meta-agent flow run --database` do)',
    );
  const { flowRuns } = host;
  const events = fronts.get(DBOS.workflowID ?? '')?.events ?? new EventBus();
  const state = await DBOS.runStep(
    async () => (await flowRuns.load(input.key, input.flow)) ?? newFlowRunState(input.flow),
    { name: 'load' },
  );
  if (nextPass(state) !== input.pass)
    throw new UserError(
      `the flow run "${input.key}" is at pass ${nextPass(state)}, not ${input.pass}`,
      1,
      'run the flow again to go on from where the run is',
    );
  const { models, nodeModels } = await host.models(input);
  const meter = new UsageMeter(events);
  const model = meter.meter(models).chatbot;
  const steps: FlowRunStore = {
    load: (key, flow) => flowRuns.load(key, flow),
    save: (key, saved) => DBOS.runStep(() => flowRuns.save(key, saved), { name: 'save' }),
  };
  return runFlowPass(
    {
      flow: input.flow,
      state,
      model,
      ...(nodeModels && { nodeModels: meter.meterEach(nodeModels) }),
      events,
      ...(input.concurrency !== undefined && { concurrency: input.concurrency }),
      ...(input.contextTokens !== undefined && { contextTokens: input.contextTokens }),
      keptAt: { store: steps, key: input.key },
      askNodes: askAsSteps,
      ...(host.mcp && { mcp: host.mcp }),
    },
    input.inputs,
  );
}

/**
 * Each node a step of the workflow, all started at once in the step's order (DBOS numbers a step when
 * it is called, so the order is the same when the workflow runs again), at most `concurrency` asking.
 */
const askAsSteps: NodeAsker = (nodes, concurrency, ask) => {
  const slot = slots(concurrency);
  return Promise.all(
    nodes.map((node) => DBOS.runStep(() => slot(() => ask(node)), { name: `node ${node}` })),
  );
};

/** Runs jobs with at most `limit` at once, in the order they ask. */
function slots(limit: number): <T>(job: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (job) => {
    if (running < limit) running++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await job();
    } finally {
      // A waiting job takes the slot as it is; none waiting frees it.
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

/** The flow-pass workflow; registered at import, before DBOS launches. */
export const flowPassWorkflow = DBOS.registerWorkflow(carryPass, { name: 'flow.pass' });

/** Starts (or attaches to) the pass `input` names, in this process. */
export function startFlowPass(input: FlowPassInput) {
  return DBOS.startWorkflow(flowPassWorkflow, { workflowID: flowPassId(input.key, input.pass) })(input);
}
