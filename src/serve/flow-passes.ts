/**
 * Flow passes started over HTTP: one pass of a served flow (as `meta-agent flow run` runs one), on the
 * models the flow's file and the server's flags chose, each a run of its own that starts from the
 * flow's database, saved through the store after every step. A pass goes on when its request's
 * deadline passes; its report and its events stay here for its owner to fetch.
 */
import { randomBytes } from 'node:crypto';
import { EventBus } from '../events.js';
import { newFlowRunState, type FlowRunState, type NodeResult } from '../flow/run-state.js';
import { runFlowPass, type PassReport } from '../flow/runner.js';
import type { Json } from '../flow/schema.js';
import { UsageMeter } from '../llm/usage.js';
import type { ServeContext } from './context.js';
import { ApiError } from './errors.js';
import { EventLog } from './event-log.js';
import { OwnedWork } from './owned-work.js';
import type { ServedFlow } from './served.js';
import { turnFailure } from './turn-failure.js';

/** A node's result as a client sees it. */
export interface NodeView {
  status: NodeResult['status'];
  output?: Json;
  detail?: string;
  tokens: number;
  /** The model that answered it (done) or was asked (failed). */
  model?: string;
}

/** A pass as the routes show it: its report once it has finished, what it has settled so far before. */
export interface PassView {
  id: string;
  flow: string;
  status: 'running' | 'finished' | 'failed';
  pass: number;
  results: Record<string, NodeView>;
  tokens: number;
  /** Finished: every node has an output (none failed or was blocked). */
  complete?: boolean;
  /** Finished: the nodes nothing depends on, the pass's answers. */
  sinks?: string[];
  changes?: PassReport['changes'];
  savedTokens?: number;
  ms?: number;
  /** Failed: why the pass could not go on. */
  error?: string;
}

/** One key's passes in progress at once. */
const MAX_IN_PROGRESS = 4;

/** One key's finished passes kept in the process for their reports and events. */
const MAX_KEPT = 50;

export class FlowPasses {
  readonly #ctx: ServeContext;
  readonly #passes = new OwnedWork<LivePass>('flow passes', { inProgress: MAX_IN_PROGRESS, kept: MAX_KEPT });
  #stopping = false;

  constructor(ctx: ServeContext) {
    this.#ctx = ctx;
    void ctx.closing.then(() => (this.#stopping = true));
  }

  /** Starts `owner`'s pass of `served` with `inputs`; it goes on after this returns. */
  async start(owner: string, served: ServedFlow, inputs: Record<string, string>): Promise<LivePass> {
    if (this.#stopping)
      throw new ApiError(
        503,
        'the server is shutting down; start the pass again once it is back',
        'shutting_down',
      );
    checkInputs(served, inputs);
    return this.#passes.start(owner, () => new LivePass(owner, served, inputs, this.#ctx));
  }

  /** `owner`'s pass `id` of the flow `flow`; undefined when there is none, or it is another's. */
  find(owner: string, flow: string, id: string): LivePass | undefined {
    const pass = this.#passes.find(owner, id);
    return pass?.flow === flow ? pass : undefined;
  }
}

/** A pass in this process: running, or finished with its report. */
export class LivePass {
  readonly id = `pass_${randomBytes(12).toString('base64url')}`;
  readonly owner: string;
  readonly flow: string;
  readonly log = new EventLog();
  /** Settles once the pass has finished or failed. */
  readonly done: Promise<void>;
  readonly #state: FlowRunState;
  #report: PassReport | undefined;
  #error: string | undefined;

  constructor(owner: string, served: ServedFlow, inputs: Record<string, string>, ctx: ServeContext) {
    this.owner = owner;
    this.flow = served.name;
    this.#state = newFlowRunState(served.flow);
    const events = new EventBus();
    const unsubscribe = events.on((event) => this.log.append(event));
    const meter = new UsageMeter(events);
    const model = meter.meter(served.models).chatbot;
    this.done = ctx.track(
      runFlowPass(
        {
          flow: served.flow,
          state: this.#state,
          model,
          ...(served.nodeModels && { nodeModels: meter.meterEach(served.nodeModels) }),
          events,
          keptAt: { store: ctx.store.flowRuns, key: ctx.flowRunKey(this.id) },
          ...(ctx.mcp && { mcp: ctx.mcp }),
        },
        inputs,
      )
        .then(
          (report) => void (this.#report = report),
          (error: unknown) => {
            this.#error = turnFailure(error, ctx).message;
            this.log.append({ type: 'error', message: this.#error });
          },
        )
        .finally(unsubscribe),
    );
  }

  get finished(): boolean {
    return this.#report !== undefined || this.#error !== undefined;
  }

  view(): PassView {
    const report = this.#report;
    const results = report?.results ?? this.#state.current?.results ?? {};
    const base = {
      id: this.id,
      flow: this.flow,
      pass: report?.pass ?? this.#state.current?.pass ?? this.#state.passes + 1,
      results: Object.fromEntries(Object.entries(results).map(([node, result]) => [node, nodeView(result)])),
      tokens: Object.values(results).reduce((sum, result) => sum + result.tokens, 0),
    };
    if (this.#error !== undefined) return { ...base, status: 'failed', error: this.#error };
    if (!report) return { ...base, status: 'running' };
    const { complete, sinks, changes, savedTokens, ms } = report;
    return { ...base, status: 'finished', complete, sinks, changes, savedTokens, ms, tokens: report.tokens };
  }
}

function nodeView(result: NodeResult): NodeView {
  return {
    status: result.status,
    ...(result.output !== undefined && { output: result.output }),
    ...(result.detail !== undefined && { detail: result.detail }),
    tokens: result.tokens,
    ...(result.model !== undefined && { model: result.model }),
  };
}

/** Inputs the flow takes, and every one it needs: a 400 naming the first that is wrong. */
function checkInputs({ name, flow }: ServedFlow, inputs: Record<string, string>): void {
  const declared = Object.keys(flow.inputs);
  const takes = declared.length > 0 ? `; it takes ${declared.join(', ')}` : '; it takes none';
  for (const input of Object.keys(inputs))
    if (!Object.hasOwn(flow.inputs, input))
      throw new ApiError(
        400,
        `inputs.${input}: the flow "${name}" takes no such input${takes}`,
        'unknown_input',
        `inputs.${input}`,
      );
  for (const [input, spec] of Object.entries(flow.inputs))
    if (!Object.hasOwn(inputs, input) && spec.default === undefined)
      throw new ApiError(
        400,
        `inputs.${input}: the flow "${name}" needs it${spec.description ? ` (${spec.description})` : ''}`,
        'missing_input',
        `inputs.${input}`,
      );
}
