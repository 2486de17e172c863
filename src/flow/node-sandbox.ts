/**
 * Where a pass's nodes meet the sandboxes: their answer schemas, compiled once, with the file's
 * patterns matched in the pattern sandbox under the flow's time limit (never in the host); and their
 * after-query code, run one node at a time, with `flow.*` asking for temporary changes on behalf of the
 * node whose code runs. A pass makes one, and disposes of it when it ends.
 */
import { z } from 'zod';
import { pathBeyondDepth } from '../graph/json-depth.js';
import type { Parsed } from '../llm/repair.js';
import { PatternSandbox, Sandbox, withSandboxedRegExps, type SandboxLimits } from '../sandbox/index.js';
import { MAX_VALUE_DEPTH, runAfterQueryCode, type Accepted } from './after-query.js';
import {
  applyChange,
  describeChange,
  refusal,
  type ChangeLimits,
  type FlowChange,
  type PassStructure,
} from './changes.js';
import { flowNodeSchema, type FlowNode, type Json } from './schema.js';

/** What a node's code sees besides the answer, and what its changes may touch. */
export interface CodeInput {
  database: Record<string, Json>;
  outputs: ReadonlyMap<string, unknown>;
  /** The pass as the node's step began. */
  structure: PassStructure;
  limits: ChangeLimits;
}

export class NodeSandboxes {
  readonly #limits: Partial<SandboxLimits>;
  /** Told about every change a node's code asked for and was refused. */
  readonly #onRefused: (by: string, change: FlowChange, reason: string) => void;
  readonly #schemas = new Map<string, z.ZodType | undefined>();
  #sandbox: Sandbox | undefined;
  /** Where the answer schemas' patterns are matched; made with the first schema. */
  #patterns: PatternSandbox | undefined;
  /** After-query code runs one node at a time: the `flow` API answers for the node whose code runs. */
  #codeQueue: Promise<unknown> = Promise.resolve();
  #requester: ((change: FlowChange) => void) | undefined;

  constructor(
    limits: Partial<SandboxLimits>,
    onRefused: (by: string, change: FlowChange, reason: string) => void,
  ) {
    this.#limits = limits;
    this.#onRefused = onRefused;
  }

  /** The zod type of the node's answer schema, made once; undefined when it has none. */
  schemaOf(node: FlowNode): z.ZodType | undefined {
    if (!this.#schemas.has(node.name)) {
      const schema = node.afterQuery?.schema;
      if (schema) this.#patterns ??= new PatternSandbox(this.#limits);
      this.#schemas.set(
        node.name,
        schema && withSandboxedRegExps(this.#patterns!, () => z.fromJSONSchema(schema as never)),
      );
    }
    return this.#schemas.get(node.name);
  }

  /** Runs the node's after-query code over `answer`, one node at a time, with `flow.*` answering for it. */
  runCode(node: FlowNode, answer: unknown, input: CodeInput): Promise<Parsed<Accepted>> {
    const run = async (): Promise<Parsed<Accepted>> => {
      const sandbox = await this.#sandboxReady();
      const changes: FlowChange[] = [];
      let working = input.structure;
      this.#requester = (change) => {
        const reason = refusal(working, change, input.limits);
        if (reason !== undefined) {
          this.#onRefused(node.name, change, reason);
          throw new Error(`flow: ${describeChange(change)} refused: ${reason}`);
        }
        working = applyChange(working, change);
        changes.push(change);
      };
      try {
        const ran = await runAfterQueryCode(sandbox, node.afterQuery!.code!, answer, {
          node,
          database: input.database,
          outputs: Object.fromEntries(input.outputs),
        });
        return ran.ok ? { ok: true, value: { ...ran.value, changes } } : ran;
      } finally {
        this.#requester = undefined;
      }
    };
    const queued = this.#codeQueue.then(run, run);
    this.#codeQueue = queued.catch(() => undefined);
    return queued;
  }

  dispose(): void {
    this.#sandbox?.dispose();
    this.#patterns?.dispose();
  }

  async #sandboxReady(): Promise<Sandbox> {
    if (this.#sandbox) return this.#sandbox;
    const sandbox = await Sandbox.create(this.#limits);
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
