/**
 * Runs one pass of a flow. A pass is a series of steps: every node whose dependencies have outputs runs
 * in the same step, up to `concurrency` at once, against the database as the step began. When the step
 * ends, what its nodes wrote to the database and the temporary changes they asked for are committed in
 * the flow's order, and the run state is saved. So a node sees the writes of every earlier step and
 * none of its own step's, and the results are the same whether the step's nodes ran together or one
 * after another (concurrency 1): only the time differs.
 *
 * A stop (Ctrl+C, a crash) loses at most the step in progress: its nodes are asked again on resume.
 */
import { z } from 'zod';
import { InvalidFileError, UserError } from '../errors.js';
import type { EventBus } from '../events.js';
import { pathBeyondDepth } from '../graph/json-depth.js';
import { withRepair } from '../llm/repair.js';
import { askForJson, schemaFor, withSchemaInstruction } from '../llm/structured.js';
import type { ChatMessage, Completion, LanguageModel, ResponseFormat } from '../llm/types.js';
import { mapBounded } from '../map-bounded.js';
import { PatternSandbox, Sandbox, withSandboxedRegExps } from '../sandbox/index.js';
import { MAX_VALUE_DEPTH, parseAnswer, runAfterQueryCode, type Accepted } from './after-query.js';
import {
  applyChange,
  baseStructure,
  describeChange,
  refusal,
  type FlowChange,
  type PassStructure,
} from './changes.js';
import { nextStep, sinksOf, type Settlement } from './dag.js';
import { flowHash, type FlowRunState, type NodeResult, type PassState } from './run-state.js';
import { DEFAULT_CONCURRENCY, flowNodeSchema, type FlowFile, type FlowNode, type Json } from './schema.js';
import { renderFlowText } from './template.js';

export interface FlowRunOptions {
  flow: FlowFile;
  /** The run so far; the pass changes it and hands it to `save` after every step. */
  state: FlowRunState;
  /** Answers every node (metered by the caller, so its calls are events too). */
  model: LanguageModel;
  events: EventBus;
  /** Nodes asked at once (1 = one after another); default the flow's, else DEFAULT_CONCURRENCY. */
  concurrency?: number;
  save?: (state: FlowRunState) => Promise<void>;
  /** Stops the pass: calls in flight are abandoned and the state stays as the last step saved it. */
  signal?: AbortSignal;
}

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

/** A node's evaluation: its result, and what it leaves for the step's commit. */
interface Evaluated {
  result: NodeResult;
  database?: Record<string, Json>;
  changes: FlowChange[];
}

/**
 * Runs the pass in progress, or a new one with `inputs` (see passInputs). Throws a UserError for
 * inputs the flow does not take, or a pass in progress begun on another version of the flow.
 */
export async function runFlowPass(
  options: FlowRunOptions,
  inputs: Record<string, string> = {},
): Promise<PassReport> {
  return new PassRunner(options).run(inputs);
}

/**
 * The database values a new pass starts with: every input given or defaulted. An input the flow does
 * not declare, or a required one left out, is a UserError naming it.
 */
export function passInputs(flow: FlowFile, given: Record<string, string>): Record<string, string> {
  const declared = Object.keys(flow.inputs);
  for (const name of Object.keys(given))
    if (!Object.hasOwn(flow.inputs, name))
      throw new UserError(
        `--input ${name}: the flow "${flow.name}" takes no input "${name}"`,
        2,
        declared.length > 0 ? `its inputs: ${declared.join(', ')}` : 'it takes no inputs',
      );
  const values: Record<string, string> = {};
  for (const [name, spec] of Object.entries(flow.inputs)) {
    const value = Object.hasOwn(given, name) ? given[name] : spec.default;
    if (value === undefined)
      throw new UserError(
        `the flow "${flow.name}" needs --input ${name}=…`,
        2,
        spec.description ?? `every input without a default must be given`,
      );
    values[name] = value;
  }
  return values;
}

class PassRunner {
  readonly #options: FlowRunOptions;
  readonly #flow: FlowFile;
  readonly #state: FlowRunState;
  readonly #concurrency: number;
  readonly #schemas = new Map<string, z.ZodType | undefined>();
  readonly #changeLog: PassReport['changes'] = [];
  #sandbox: Sandbox | undefined;
  /** Where the answer schemas' patterns are matched; made with the first schema. */
  #patterns: PatternSandbox | undefined;
  /** After-query code runs one node at a time: the `flow` API answers for the node whose code runs. */
  #codeQueue: Promise<unknown> = Promise.resolve();
  #requester: ((change: FlowChange) => void) | undefined;

  constructor(options: FlowRunOptions) {
    this.#options = options;
    this.#flow = options.flow;
    this.#state = options.state;
    this.#concurrency = Math.max(
      1,
      options.concurrency ?? options.flow.config.concurrency ?? DEFAULT_CONCURRENCY,
    );
  }

  async run(inputs: Record<string, string>): Promise<PassReport> {
    const started = performance.now();
    const resumed = this.#state.current !== undefined;
    const begun = resumed
      ? this.#resume(inputs)
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
        this.#settleSkips(structure, pass);
        const next = nextStep(structure, settlements(pass), (node) => rootFailure(pass, node));
        for (const { node, failed } of next.blocked) this.#block(pass, node, failed);
        // What a blocked node blocks in turn is decided on the next round.
        if (next.blocked.length > 0) continue;
        if (next.ready.length === 0) break;
        structure = await this.#step(structure, pass, next.ready);
      }
    } catch (error) {
      if (this.#options.signal?.aborted) return this.#report(pass, structure, started, true);
      throw error;
    } finally {
      this.#sandbox?.dispose();
      this.#patterns?.dispose();
    }
    const report = this.#report(pass, structure, started, false);
    this.#state.passes = pass.pass;
    delete this.#state.current;
    await this.#options.save?.(this.#state);
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
    await this.#options.save?.(this.#state);
    return pass;
  }

  /** The pass in progress, and the structure its saved changes make. */
  #resume(inputs: Record<string, string>): { pass: PassState; structure: PassStructure } {
    const pass = this.#state.current!;
    if (this.#state.flowHash !== flowHash(this.#flow))
      throw new UserError(
        `pass ${pass.pass} of "${this.#flow.name}" began on another version of the flow file`,
        2,
        'restore the flow as it was to finish that pass, or start a new run without its state file',
      );
    // The run file may have been edited by hand or by someone else: its changes are checked again.
    let structure = baseStructure(this.#flow);
    const limits = { frozen: () => false, reusable: (node: string) => Object.hasOwn(this.#state.last, node) };
    for (const change of pass.changes) {
      const reason = refusal(structure, change, limits);
      if (reason !== undefined)
        throw new InvalidFileError(
          `the saved pass ${pass.pass} of "${this.#flow.name}" holds a change that cannot be made: ${describeChange(change)}: ${reason}`,
          'start a new run without that state file',
        );
      structure = applyChange(structure, change);
    }
    const differs = Object.entries(inputs).some(([name, value]) => pass.inputs[name] !== value);
    if (differs)
      throw new UserError(
        `pass ${pass.pass} of "${this.#flow.name}" is not finished, and began with other inputs`,
        2,
        'run it again without --input to finish it; the new inputs go to the next pass',
      );
    return { pass, structure };
  }

  /** Nodes skipped by a committed change settle as reused, before anything else is decided. */
  #settleSkips(structure: PassStructure, pass: PassState): void {
    for (const node of structure.skips) {
      if (pass.results[node]) continue;
      const last = this.#state.last[node]!;
      pass.results[node] = {
        status: 'reused',
        output: last.output,
        prompt: last.prompt,
        tokens: 0,
        attempts: 0,
        savedTokens: last.tokens,
      };
      this.#options.events.emit({
        type: 'flow.node',
        node,
        status: 'reused',
        output: last.output,
        tokens: last.tokens,
      });
    }
  }

  #block(pass: PassState, node: string, failed: string): void {
    const detail = `skipped: upstream failed (${failed})`;
    pass.results[node] = { status: 'blocked', tokens: 0, attempts: 0, upstream: failed, detail };
    this.#options.events.emit({ type: 'flow.node', node, status: 'blocked', detail });
  }

  /** Runs `ready` at once (up to the limit), then commits their results in order; returns the new structure. */
  async #step(structure: PassStructure, pass: PassState, ready: string[]): Promise<PassStructure> {
    const step = pass.steps + 1;
    this.#options.events.emit({ type: 'flow.step', step, nodes: ready });
    const database = structuredClone(this.#state.database);
    const running = new Set(ready);
    const frozen = (node: string) => Object.hasOwn(pass.results, node) || running.has(node);
    const evaluated = await mapBounded(ready, this.#concurrency, (name) =>
      this.#evaluate(structure, pass, name, database, frozen),
    );
    this.#options.signal?.throwIfAborted();
    let next = structure;
    for (const [i, name] of ready.entries()) {
      const { result, database: written, changes } = evaluated[i]!;
      if (written) this.#commitDatabase(name, database, written);
      next = this.#commitChanges(next, pass, name, changes, frozen);
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
    await this.#options.save?.(this.#state);
    return next;
  }

  /** Applies the top-level keys the node's code changed, relative to the step's snapshot. */
  #commitDatabase(by: string, before: Record<string, Json>, after: Record<string, Json>): void {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    const changed = [...keys].filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]));
    if (changed.length === 0) return;
    for (const key of changed) {
      if (Object.hasOwn(after, key)) this.#state.database[key] = after[key]!;
      else delete this.#state.database[key];
    }
    this.#options.events.emit({ type: 'flow.database', by, keys: changed });
  }

  /**
   * Applies one node's changes together, or none of them: each was accepted when asked, but a node
   * earlier in the same step may have changed the flow since (two edges that together close a cycle).
   */
  #commitChanges(
    structure: PassStructure,
    pass: PassState,
    by: string,
    changes: FlowChange[],
    frozen: (node: string) => boolean,
  ): PassStructure {
    if (changes.length === 0) return structure;
    const limits = { frozen, reusable: (node: string) => Object.hasOwn(this.#state.last, node) };
    let next = structure;
    for (const change of changes) {
      const reason = refusal(next, change, limits);
      if (reason !== undefined) {
        for (const refused of changes)
          this.#logChange(by, refused, false, `refused with the rest: ${reason}`);
        return structure;
      }
      next = applyChange(next, change);
    }
    pass.changes.push(...changes);
    for (const change of changes) this.#logChange(by, change, true);
    return next;
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
    frozen: (node: string) => boolean,
  ): Promise<Evaluated> {
    const { events, signal } = this.#options;
    const node = structure.nodes.get(name)!;
    const dependencies = structure.dependencies.get(name) ?? [];
    const outputs = new Map(dependencies.map((dep) => [dep, pass.results[dep]!.output]));
    let prompt: string;
    let messages: ChatMessage[];
    try {
      prompt = renderFlowText(node.prompt, { db: database, outputs });
      messages = this.#compose(node, prompt, dependencies, pass, database, outputs);
    } catch (error) {
      return this.#failed(name, 0, 0, `its prompt: ${(error as Error).message}`);
    }
    const schema = this.#schemaOf(node);
    let tokens = 0;
    let lastProblem = '';
    let rejections = 0;
    let accepted: Accepted | undefined;
    try {
      const repaired = await withRepair({
        messages: schema ? withSchemaInstruction(messages, schemaFor(schema)) : messages,
        tries: this.#flow.config.attempts,
        what: `node "${name}"`,
        ask: async (conversation, attempt) => {
          events.emit(
            attempt === 1
              ? { type: 'flow.node', node: name, status: 'running', attempt }
              : { type: 'flow.node', node: name, status: 'retry', attempt, detail: lastProblem },
          );
          const completion = await this.#ask(name, conversation, schema, signal);
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
          const ran = await this.#runCode(node, parsed.value, database, outputs, structure, frozen);
          if (ran.ok) accepted = ran.value;
          else [lastProblem, rejections] = [ran.error, rejections + 1];
          return ran;
        },
      });
      const attempts = repaired.attempts;
      const result: NodeResult = { status: 'done', output: accepted!.output, prompt, tokens, attempts };
      events.emit({
        type: 'flow.node',
        node: name,
        status: 'done',
        output: result.output,
        tokens,
        attempt: attempts,
      });
      const { database: written, changes } = accepted!;
      return { result, ...(written && { database: written }), changes };
    } catch (error) {
      if (signal?.aborted) throw error;
      const attempts = this.#flow.config.attempts;
      // Only answers the step rejected fall back; a model that cannot be reached or code that cannot run fails.
      if (rejections === attempts && node.fallback !== undefined)
        return this.#fellBack(name, node.fallback, prompt, tokens, attempts, lastProblem);
      return this.#failed(name, tokens, rejections, error instanceof Error ? error.message : String(error));
    }
  }

  #fellBack(
    name: string,
    fallback: Json,
    prompt: string,
    tokens: number,
    attempts: number,
    problem: string,
  ): Evaluated {
    const detail = `fallback used: ${attempts} answers were rejected, the last because ${problem}`;
    const result: NodeResult = {
      status: 'done',
      output: fallback,
      prompt,
      tokens,
      attempts,
      fellBack: true,
      detail,
    };
    this.#options.events.emit({
      type: 'flow.node',
      node: name,
      status: 'done',
      output: fallback,
      tokens,
      detail,
    });
    return { result, changes: [] };
  }

  #failed(name: string, tokens: number, attempts: number, detail: string): Evaluated {
    this.#options.events.emit({ type: 'flow.node', node: name, status: 'failed', detail, tokens });
    return { result: { status: 'failed', tokens, attempts, detail }, changes: [] };
  }

  /**
   * The node's messages. By default (seed 003, eq. 1): the system message, each dependency as an
   * earlier question and its answer, in the order the node lists them, then the node's own prompt.
   * A compose template makes the prompt one message instead.
   */
  #compose(
    node: FlowNode,
    prompt: string,
    dependencies: readonly string[],
    pass: PassState,
    database: Record<string, Json>,
    outputs: ReadonlyMap<string, unknown>,
  ): ChatMessage[] {
    const system: ChatMessage[] = this.#flow.config.system
      ? [{ role: 'system', content: renderFlowText(this.#flow.config.system, { db: database }) }]
      : [];
    if (node.compose !== undefined)
      return [
        ...system,
        { role: 'user', content: renderFlowText(node.compose, { db: database, outputs, prompt }) },
      ];
    const earlier = dependencies.flatMap((dep): ChatMessage[] => {
      const result = pass.results[dep]!;
      return [
        { role: 'user', content: result.prompt ?? dep },
        { role: 'assistant', content: asText(result.output) },
      ];
    });
    return [...system, ...earlier, { role: 'user', content: prompt }];
  }

  async #ask(
    name: string,
    messages: ChatMessage[],
    schema: z.ZodType | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Completion> {
    const { model, events } = this.#options;
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

  /**
   * The zod type of the node's answer schema, made once; undefined when it has none. Its patterns are
   * the file's: they match in the pattern sandbox, under the flow's time limit, never in the host.
   */
  #schemaOf(node: FlowNode): z.ZodType | undefined {
    if (!this.#schemas.has(node.name)) {
      const schema = node.afterQuery?.schema;
      if (schema) this.#patterns ??= new PatternSandbox(this.#flow.config.sandbox);
      this.#schemas.set(
        node.name,
        schema && withSandboxedRegExps(this.#patterns!, () => z.fromJSONSchema(schema as never)),
      );
    }
    return this.#schemas.get(node.name);
  }

  /** Runs the node's after-query code, one node at a time, with `flow.*` answering for it. */
  #runCode(
    node: FlowNode,
    answer: unknown,
    database: Record<string, Json>,
    outputs: ReadonlyMap<string, unknown>,
    structure: PassStructure,
    frozen: (node: string) => boolean,
  ) {
    const run = async () => {
      const sandbox = await this.#sandboxReady();
      const changes: FlowChange[] = [];
      let working = structure;
      const limits = { frozen, reusable: (name: string) => Object.hasOwn(this.#state.last, name) };
      this.#requester = (change) => {
        const reason = refusal(working, change, limits);
        if (reason !== undefined) {
          this.#logChange(node.name, change, false, reason);
          throw new Error(`flow: ${describeChange(change)} refused: ${reason}`);
        }
        working = applyChange(working, change);
        changes.push(change);
      };
      try {
        const ran = await runAfterQueryCode(sandbox, node.afterQuery!.code!, answer, {
          node,
          database,
          outputs: Object.fromEntries(outputs),
        });
        return ran.ok ? { ok: true as const, value: { ...ran.value, changes } } : ran;
      } finally {
        this.#requester = undefined;
      }
    };
    const queued = this.#codeQueue.then(run, run);
    this.#codeQueue = queued.catch(() => undefined);
    return queued;
  }

  async #sandboxReady(): Promise<Sandbox> {
    if (this.#sandbox) return this.#sandbox;
    const sandbox = await Sandbox.create(this.#flow.config.sandbox);
    sandbox.expose(
      'flow',
      flowApi((change) => {
        if (!this.#requester) throw new Error('flow changes can only be made by a running after-query step');
        this.#requester(change);
      }),
    );
    this.#sandbox = sandbox;
    return sandbox;
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

/** `flow.addNode(fields)`, `flow.addEdge(from, to)`, `flow.removeEdge(from, to)`, `flow.skip(name)`. */
function flowApi(request: (change: FlowChange) => void) {
  return {
    addNode: (fields: unknown) => {
      // Validation recurses once a level of the fallback: a deep one is refused before it.
      if (pathBeyondDepth(fields, MAX_VALUE_DEPTH) !== undefined)
        throw new Error(`flow.addNode: the fields nest more than ${MAX_VALUE_DEPTH} levels deep`);
      const parsed = flowNodeSchema.safeParse(fields);
      if (!parsed.success)
        throw new Error(
          `flow.addNode: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'fields'}: ${i.message}`).join('; ')}`,
        );
      request({ op: 'add-node', node: parsed.data });
    },
    addEdge: (from: unknown, to: unknown) => request({ op: 'add-edge', from: String(from), to: String(to) }),
    removeEdge: (from: unknown, to: unknown) =>
      request({ op: 'remove-edge', from: String(from), to: String(to) }),
    skip: (name: unknown) => request({ op: 'skip', node: String(name) }),
  };
}

function settlements(pass: PassState): Map<string, Settlement> {
  return new Map(Object.entries(pass.results).map(([name, result]) => [name, result.status]));
}

function rootFailure(pass: PassState, node: string): string {
  const result = pass.results[node];
  return result?.status === 'blocked' && result.upstream ? result.upstream : node;
}

/** A dependency's output as the text of an earlier answer. */
function asText(output: unknown): string {
  return typeof output === 'string' ? output : JSON.stringify(output, null, 2);
}
