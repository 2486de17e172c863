/**
 * Runs one pass of a flow. A pass is a series of steps: every node whose dependencies have outputs runs
 * in the same step, up to `concurrency` at once, against the database as the step began. When the step
 * ends, what its nodes wrote to the database and the temporary changes they asked for are committed in
 * the flow's order, and the run state is saved. So a node sees the writes of every earlier step and
 * none of its own step's, and the results are the same whether the step's nodes ran together or one
 * after another (concurrency 1): only the time differs.
 *
 * A stop (Ctrl+C, a crash) loses at most the step in progress: its nodes are asked again on resume.
 * What the pass does next, what a node is asked and how its evaluation ends are pure decisions
 * (pass-plan.ts); this module performs them: the model calls, the events, the saves. The sandboxes the
 * nodes' schemas and after-query code use are node-sandbox.ts; a tool node's call is tool-node.ts.
 */
import type { z } from 'zod';
import type { EventBus } from '../events.js';
import { withRepair } from '../llm/repair.js';
import { askForJson, schemaFor, withSchemaInstruction } from '../llm/structured.js';
import type { ChatMessage, Completion, LanguageModel, ResponseFormat } from '../llm/types.js';
import { mapBounded } from '../map-bounded.js';
import type { McpServers } from '../mcp/servers.js';
import { CONTEXT_TOKENS } from '../autonomous/budget.js';
import { parseAnswer, type Accepted } from './after-query.js';
import {
  baseStructure,
  describeChange,
  type ChangeLimits,
  type FlowChange,
  type PassStructure,
} from './changes.js';
import { sinksOf } from './dag.js';
import { fitToContext, type Fitted } from './fit-context.js';
import type { FlowRunStore } from './flow-run-store.js';
import { NodeSandboxes } from './node-sandbox.js';
import {
  changedKeys,
  checkToolServers,
  commitChanges,
  failedResult,
  nextMove,
  nodeEvent,
  nodeRequest,
  passInputs,
  resumedStructure,
  setAside,
  stepLimits,
  toolRequest,
  unansweredResult,
} from './pass-plan.js';
import { flowHash, type FlowRunState, type NodeResult, type PassState } from './run-state.js';
import { DEFAULT_CONCURRENCY, type FlowFile, type Json } from './schema.js';
import { callToolNode } from './tool-node.js';

export interface FlowRunOptions {
  flow: FlowFile;
  /** The run so far; the pass changes it and saves it after every step. */
  state: FlowRunState;
  /** Answers every node that names no model (metered by the caller, so its calls are events too). */
  model: LanguageModel;
  /**
   * The models of the nodes that name one, by the name they give (`reason`, `gpt-4o`, `local`);
   * metered as `model` is. A node whose name is missing here fails, saying so.
   */
  nodeModels?: ReadonlyMap<string, LanguageModel>;
  events: EventBus;
  /** Nodes asked at once (1 = one after another); default the flow's, else DEFAULT_CONCURRENCY. */
  concurrency?: number;
  /** Where the run is saved after every step: the store, and the run's key there; nowhere when absent. */
  keptAt?: { store: FlowRunStore; key: string };
  /** Stops the pass: calls in flight are abandoned and the state stays as the last step saved it. */
  signal?: AbortSignal;
  /** How a step's nodes are asked; default: up to `concurrency` at once, in this process. */
  askNodes?: NodeAsker;
  /** The user's MCP servers, which tool nodes call; a flow with tool nodes refuses to run without them. */
  mcp?: McpServers;
  /**
   * The model's context window in tokens, which every node's prompt is trimmed to fit (fit-context.ts);
   * default the flow's `config.contextTokens`, else the goal loop's CONTEXT_TOKENS.
   */
  contextTokens?: number;
}

/**
 * Asks a step's nodes: calls `ask` once for each of `nodes` (with at most `concurrency` in flight) and
 * gives back what each call gave, in the order of `nodes`. What a call gives is plain JSON, so an asker
 * may record it and give it back later without asking again: a durable pass (src/durable/flow-pass.ts)
 * makes each node a step of its workflow, so a node whose answer was recorded is not asked twice.
 */
export type NodeAsker = <T>(
  nodes: readonly string[],
  concurrency: number,
  ask: (node: string) => Promise<T>,
) => Promise<T[]>;

/** The default asker: the nodes in this process, up to `concurrency` at once. */
export const askInProcess: NodeAsker = (nodes, concurrency, ask) => mapBounded(nodes, concurrency, ask);

/** How a pass ended. */
export interface PassReport {
  flow: string;
  pass: number;
  /** Every node of the pass, in order (temporary ones last). */
  order: string[];
  results: Record<string, NodeResult>;
  /** Nodes nothing depends on: the pass's answers. */
  sinks: string[];
  /** Outputs of the nodes that have one (done or reused). */
  outputs: Record<string, Json>;
  /** The temporary changes of the pass, applied or refused. */
  changes: { by: string; change: string; applied: boolean; reason?: string }[];
  tokens: number;
  savedTokens: number;
  ms: number;
  /** Every node has an output: none failed or was blocked. */
  complete: boolean;
  /** The pass was stopped before its end; it goes on from its last step when run again. */
  interrupted: boolean;
}

/** A node's evaluation: its result, and what it leaves for the step's commit. Plain JSON (see NodeAsker). */
interface Evaluated {
  result: NodeResult;
  database?: Record<string, Json>;
  changes: FlowChange[];
}

/**
 * Runs the pass in progress, or a new one with `inputs` (see pass-plan.ts passInputs). Throws a
 * UserError for inputs the flow does not take, or a pass in progress begun on another version of the
 * flow.
 */
export async function runFlowPass(
  options: FlowRunOptions,
  inputs: Record<string, string> = {},
): Promise<PassReport> {
  return new PassRunner(options).run(inputs);
}

class PassRunner {
  readonly #options: FlowRunOptions;
  readonly #flow: FlowFile;
  readonly #state: FlowRunState;
  readonly #concurrency: number;
  readonly #changeLog: PassReport['changes'] = [];
  readonly #sandboxes: NodeSandboxes;

  constructor(options: FlowRunOptions) {
    this.#options = options;
    this.#flow = options.flow;
    this.#state = options.state;
    this.#concurrency = Math.max(
      1,
      options.concurrency ?? options.flow.config.concurrency ?? DEFAULT_CONCURRENCY,
    );
    this.#sandboxes = new NodeSandboxes(options.flow.config.sandbox, (by, change, reason) =>
      this.#logChange(by, change, false, reason),
    );
  }

  async #save(): Promise<void> {
    const { keptAt } = this.#options;
    await keptAt?.store.save(keptAt.key, this.#state);
  }

  async run(inputs: Record<string, string>): Promise<PassReport> {
    checkToolServers(this.#flow, this.#options.mcp?.names());
    const started = performance.now();
    const resumed = this.#state.current !== undefined;
    const begun = resumed
      ? { pass: this.#state.current!, structure: resumedStructure(this.#flow, this.#state, inputs) }
      : { pass: await this.#begin(inputs), structure: baseStructure(this.#flow) };
    const { pass } = begun;
    let { structure } = begun;
    this.#options.events.emit({
      type: 'flow.started',
      flow: this.#flow.name,
      pass: pass.pass,
      nodes: [...structure.order],
      concurrency: this.#concurrency,
      resumed,
    });
    try {
      for (;;) {
        const move = nextMove(structure, pass, this.#state.last);
        if (move.kind === 'finish') break;
        if (move.kind === 'run') structure = await this.#step(structure, pass, move.nodes);
        else for (const { node, result } of move.settled) this.#settle(pass, node, result);
      }
    } catch (error) {
      if (this.#options.signal?.aborted) return this.#report(pass, structure, started, true);
      throw error;
    } finally {
      this.#sandboxes.dispose();
    }
    const report = this.#report(pass, structure, started, false);
    this.#state.passes = pass.pass;
    delete this.#state.current;
    await this.#save();
    const count = (status: NodeResult['status']) =>
      Object.values(pass.results).filter((r) => r.status === status).length;
    this.#options.events.emit({
      type: 'flow.ended',
      pass: pass.pass,
      done: count('done'),
      failed: count('failed'),
      reused: count('reused'),
      blocked: count('blocked'),
      tokens: report.tokens,
      savedTokens: report.savedTokens,
      ms: report.ms,
    });
    return report;
  }

  async #begin(inputs: Record<string, string>): Promise<PassState> {
    const values = passInputs(this.#flow, inputs);
    this.#state.flowHash = flowHash(this.#flow);
    Object.assign(this.#state.database, values);
    const pass: PassState = {
      pass: this.#state.passes + 1,
      inputs: values,
      steps: 0,
      results: {},
      changes: [],
      startedAt: new Date().toISOString(),
    };
    this.#state.current = pass;
    await this.#save();
    return pass;
  }

  /** A node settled without being asked (reused or blocked). */
  #settle(pass: PassState, node: string, result: NodeResult): void {
    pass.results[node] = result;
    this.#options.events.emit(nodeEvent(node, result));
  }

  /**
   * Runs `ready` at once (up to the limit), then commits their results in order; returns the new
   * structure. A node whose inputs a node before it in the step changed is set aside (pass-plan.ts
   * setAside): it is not committed, and runs in a later step.
   */
  async #step(structure: PassStructure, pass: PassState, ready: string[]): Promise<PassStructure> {
    const step = pass.steps + 1;
    this.#options.events.emit({ type: 'flow.step', step, nodes: ready });
    const database = structuredClone(this.#state.database);
    const limitsOf = (name: string) => stepLimits(this.#state, pass, step, ready, name);
    const finished = new Map<string, readonly FlowChange[]>();
    const askNodes = this.#options.askNodes ?? askInProcess;
    const ask = async (name: string): Promise<Evaluated | null> => {
      if (setAside(ready, (node) => finished.get(node)).has(name)) {
        finished.set(name, []);
        return null;
      }
      const answer = await this.#evaluate(structure, pass, name, database, limitsOf(name));
      finished.set(name, answer.changes);
      return answer;
    };
    // A tool may have side effects, so it is called once: one that a node before it in the step could
    // set aside (by a change its after-query code makes) is called after the others have finished,
    // when whether it is set aside is known. Their results tell it, also where a durable pass replays them.
    const [now, later] = partition(ready, (name) => !mayBeSetAside(structure, ready, name));
    const first = await askNodes(now, this.#concurrency, ask);
    for (const [i, name] of now.entries()) finished.set(name, first[i]?.changes ?? []);
    // A tool node changes nothing: those still to be called do not hide the changes of the nodes after them.
    for (const name of later) finished.set(name, []);
    const second = later.length > 0 ? await askNodes(later, this.#concurrency, ask) : [];
    const evaluated = ready.map((name) =>
      now.includes(name) ? first[now.indexOf(name)]! : second[later.indexOf(name)]!,
    );
    this.#options.signal?.throwIfAborted();
    const aside = setAside(ready, (node) => evaluated[ready.indexOf(node)]?.changes ?? []);
    let next = structure;
    for (const [i, name] of ready.entries()) {
      if (aside.has(name)) continue;
      const { result: answered, database: written, changes } = evaluated[i]!;
      const result: NodeResult = { ...answered, step };
      if (written) this.#commitDatabase(name, database, written);
      next = this.#commitChanges(next, pass, name, changes, limitsOf(name));
      pass.results[name] = result;
      if (result.status === 'done')
        this.#state.last[name] = {
          output: result.output!,
          prompt: result.prompt!,
          tokens: result.tokens,
          pass: pass.pass,
        };
    }
    pass.steps = step;
    await this.#save();
    return next;
  }

  /** Applies the top-level keys the node's code changed, relative to the step's snapshot. */
  #commitDatabase(by: string, before: Record<string, Json>, after: Record<string, Json>): void {
    const changed = changedKeys(before, after);
    if (changed.length === 0) return;
    for (const key of changed) {
      if (Object.hasOwn(after, key)) this.#state.database[key] = after[key]!;
      else delete this.#state.database[key];
    }
    this.#options.events.emit({ type: 'flow.database', by, keys: changed });
  }

  /** Applies one node's changes together, or refuses them all (pass-plan.ts commitChanges). */
  #commitChanges(
    structure: PassStructure,
    pass: PassState,
    by: string,
    changes: FlowChange[],
    limits: ChangeLimits,
  ): PassStructure {
    if (changes.length === 0) return structure;
    const committed = commitChanges(structure, changes, limits);
    if (!committed.ok) {
      for (const refused of changes)
        this.#logChange(by, refused, false, `refused with the rest: ${committed.reason}`);
      return structure;
    }
    pass.changes.push(...changes);
    for (const change of changes) this.#logChange(by, change, true);
    return committed.structure;
  }

  #logChange(by: string, change: FlowChange, applied: boolean, reason?: string): void {
    const entry = { by, change: describeChange(change), applied, ...(reason !== undefined && { reason }) };
    this.#changeLog.push(entry);
    this.#options.events.emit({ type: 'flow.changed', ...entry });
  }

  /** Asks the model for one node, through its after-query step, with retries and the fallback. */
  async #evaluate(
    structure: PassStructure,
    pass: PassState,
    name: string,
    database: Record<string, Json>,
    limits: ChangeLimits,
  ): Promise<Evaluated> {
    const { events, signal } = this.#options;
    const node = structure.nodes.get(name)!;
    if (node.tool) {
      const call = toolRequest(structure, pass, name, database);
      if (!call.ok) return this.#evaluated(name, call.result);
      return this.#evaluated(name, await callToolNode(this.#options.mcp, name, call, events, signal));
    }
    const model = node.model === undefined ? this.#options.model : this.#options.nodeModels?.get(node.model);
    if (!model)
      return this.#evaluated(
        name,
        failedResult(
          0,
          0,
          `its model "${node.model}" was not resolved when the pass began (flow run, chat, call and simulate resolve the models a flow's nodes name; a flow run by an autogram that serve, mcp or worker hosts has only the graph's chatbot)`,
        ),
      );
    const answeredBy = { model: model.modelName };
    const request = nodeRequest(this.#flow, structure, pass, name, database);
    if (!request.ok) return this.#evaluated(name, request.result);
    const { prompt, outputs, unset } = request;
    if (unset.length > 0) events.emit({ type: 'flow.unset', node: name, references: unset });
    const schema = this.#sandboxes.schemaOf(node);
    const fitted = this.#fit(
      name,
      model,
      schema ? withSchemaInstruction(request.messages, schemaFor(schema)) : request.messages,
    );
    if (!fitted.ok) return this.#evaluated(name, failedResult(0, 0, fitted.error));
    let tokens = 0;
    let lastProblem = '';
    let rejections = 0;
    let accepted: Accepted | undefined;
    try {
      const repaired = await withRepair({
        messages: fitted.messages,
        tries: this.#flow.config.attempts,
        what: `node "${name}"`,
        ask: async (conversation, attempt) => {
          events.emit(
            attempt === 1
              ? { type: 'flow.node', node: name, status: 'running', attempt }
              : { type: 'flow.node', node: name, status: 'retry', attempt, detail: lastProblem },
          );
          const completion = await this.#ask(model, name, conversation, schema, signal);
          tokens += completion.usage.promptTokens + completion.usage.completionTokens;
          return completion;
        },
        parse: async (text) => {
          const parsed = parseAnswer(text, schema);
          if (!parsed.ok || !node.afterQuery?.code) {
            if (parsed.ok) accepted = { output: parsed.value as Json, changes: [] };
            else [lastProblem, rejections] = [parsed.error, rejections + 1];
            return parsed;
          }
          const ran = await this.#sandboxes.runCode(node, parsed.value, {
            database,
            outputs,
            structure,
            limits,
          });
          if (ran.ok) accepted = ran.value;
          else [lastProblem, rejections] = [ran.error, rejections + 1];
          return ran;
        },
      });
      const { output } = accepted!;
      const result: NodeResult = {
        status: 'done',
        output,
        prompt,
        tokens,
        attempts: repaired.attempts,
        ...answeredBy,
      };
      return this.#evaluated(name, result, accepted);
    } catch (error) {
      if (signal?.aborted) throw error;
      const message = error instanceof Error ? error.message : String(error);
      const { attempts: tries } = this.#flow.config;
      return this.#evaluated(name, {
        ...unansweredResult({ node, prompt, tokens, tries, rejections, lastProblem, error: message }),
        ...answeredBy,
      });
    }
  }

  /** The node's messages within the model's context (fit-context.ts); a trim is told, never silent. */
  #fit(name: string, model: LanguageModel, messages: ChatMessage[]): Fitted {
    const { config } = this.#flow;
    const contextTokens = this.#options.contextTokens ?? config.contextTokens ?? CONTEXT_TOKENS;
    const answerTokens = config.generation?.maxTokens;
    const fitted = fitToContext(name, messages, {
      contextTokens,
      modelName: model.modelName,
      ...(answerTokens !== undefined && { answerTokens }),
    });
    if (fitted.ok && fitted.trim.from !== fitted.trim.to)
      this.#options.events.emit({ type: 'flow.trimmed', node: name, ...fitted.trim, contextTokens });
    return fitted;
  }

  /** Tells the user how a node's evaluation ended; what it accepted goes to the step's commit. */
  #evaluated(name: string, result: NodeResult, accepted?: Accepted): Evaluated {
    this.#options.events.emit(nodeEvent(name, result));
    const written = accepted?.database;
    return { result, ...(written && { database: written }), changes: accepted?.changes ?? [] };
  }

  async #ask(
    model: LanguageModel,
    name: string,
    messages: ChatMessage[],
    schema: z.ZodType | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Completion> {
    const { events } = this.#options;
    const generation = this.#flow.config.generation;
    const send = (responseFormat?: ResponseFormat) =>
      model.stream(
        {
          messages,
          purpose: `flow node ${name}`,
          ...(responseFormat && { responseFormat }),
          ...(generation?.temperature !== undefined && { temperature: generation.temperature }),
          ...(generation?.maxTokens !== undefined && { maxTokens: generation.maxTokens }),
          ...(signal && { signal }),
        },
        (chunk) => events.emit({ type: 'flow.delta', node: name, delta: chunk.delta }),
      );
    if (!schema) return send();
    return (await askForJson(model, name.replace(/[^\w-]/g, '_'), schemaFor(schema), send)).completion;
  }

  #report(pass: PassState, structure: PassStructure, started: number, interrupted: boolean): PassReport {
    const results = pass.results;
    const outputs: Record<string, Json> = {};
    for (const name of structure.order) {
      const result = results[name];
      if (result && (result.status === 'done' || result.status === 'reused')) outputs[name] = result.output!;
    }
    const all = Object.values(results);
    return {
      flow: this.#flow.name,
      pass: pass.pass,
      order: [...structure.order],
      results,
      sinks: sinksOf(structure),
      outputs,
      changes: this.#changeLog,
      tokens: all.reduce((sum, r) => sum + r.tokens, 0),
      savedTokens: all.reduce((sum, r) => sum + (r.savedTokens ?? 0), 0),
      ms: Math.round(performance.now() - started),
      complete:
        !interrupted &&
        structure.order.every(
          (name) => results[name]?.status === 'done' || results[name]?.status === 'reused',
        ),
      interrupted,
    };
  }
}

/** Whether `name` is a tool node that a change of a node before it in the step could set aside. */
function mayBeSetAside(structure: PassStructure, ready: readonly string[], name: string): boolean {
  if (!structure.nodes.get(name)!.tool) return false;
  return ready
    .slice(0, ready.indexOf(name))
    .some((before) => structure.nodes.get(before)!.afterQuery?.code !== undefined);
}

function partition<T>(items: readonly T[], test: (item: T) => boolean): [T[], T[]] {
  return [items.filter(test), items.filter((item) => !test(item))];
}
