/**
 * The after-query step (seed 003, §2.1.2, Algorithm 1): the answer is parsed (against the node's JSON
 * Schema, when it has one) and handed to the node's code in the sandbox, which may reshape it, write the
 * database and change the flow for the rest of the pass. Throwing rejects the answer: the message goes
 * back to the model, which tries again. A time-out, a memory limit or a value that is not plain data
 * fails the node at once: another answer would not fix the code.
 */
import { z } from 'zod';
import { MAX_JSON_DEPTH, pathBeyondDepth } from '../graph/json-depth.js';
import type { Parsed } from '../llm/repair.js';
import { parseObject } from '../llm/structured.js';
import type { Sandbox } from '../sandbox/index.js';
import { SandboxError } from '../sandbox/index.js';
import type { FlowChange } from './changes.js';
import type { FlowNode, Json } from './schema.js';

/** What an accepted answer leaves behind. */
export interface Accepted {
  output: Json;
  /** The database as the code left it; undefined when the node has no code. */
  database?: Record<string, Json>;
  /** The changes the code asked for (each accepted when asked). */
  changes: FlowChange[];
}

/** What the code sees besides the answer. */
export interface AfterQueryInput {
  node: FlowNode;
  database: Record<string, Json>;
  outputs: Record<string, unknown>;
}

/**
 * How deep the values a run makes (answers, the code's value and `db`) may nest: as deep as a flow
 * file's database, one level below the file's top. Validation recurses once a level, and a saved run
 * holding such values loads again (run-state.ts).
 */
export const MAX_VALUE_DEPTH = MAX_JSON_DEPTH - 1;

const jsonValue = z.json();
const database = z.record(z.string(), z.json());

/**
 * Parses the answer against the node's schema (if any); the zod type is compiled once per schema. An
 * answer nested deeper than MAX_VALUE_DEPTH is rejected like one that does not match.
 */
export function parseAnswer(text: string, schema: z.ZodType | undefined): Parsed<unknown> {
  if (!schema) return { ok: true, value: text };
  const parsed = parseObject(text, schema);
  if (parsed.ok && pathBeyondDepth(parsed.value, MAX_VALUE_DEPTH) !== undefined)
    return { ok: false, error: `the JSON nests more than ${MAX_VALUE_DEPTH} levels deep` };
  return parsed;
}

/**
 * Runs the node's code over `answer`: the completion value is the output (the answer itself when the
 * code ends without a value). A rejection comes back as `{ ok: false }`; failures that another answer
 * cannot fix are thrown.
 */
export async function runAfterQueryCode(
  sandbox: Sandbox,
  code: string,
  answer: unknown,
  input: AfterQueryInput,
): Promise<Parsed<Omit<Accepted, 'changes'>>> {
  const scope = {
    answer,
    db: structuredClone(input.database),
    outputs: input.outputs,
    node: input.node.name,
  };
  let result;
  try {
    result = await sandbox.runCode(code, scope, { node: input.node.name });
  } catch (error) {
    // `throw new Error(why)` is how code rejects an answer: the model is told `why`, not `Error: why`.
    if (error instanceof SandboxError && error.kind === 'runtime')
      return { ok: false, error: error.detail.replace(/^Error: /, '') };
    throw error;
  }
  const output = result.value === undefined ? answer : result.value;
  const db = 'db' in result.changed ? result.changed.db : scope.db;
  // Checked before zod, which recurses once a level; and what is saved must load again.
  for (const [what, value] of [
    ['value', output],
    ['`db`', db],
  ] as const)
    if (pathBeyondDepth(value, MAX_VALUE_DEPTH) !== undefined)
      throw new SandboxError(
        'uncopyable',
        input.node.name,
        `the after-query code’s ${what} nests more than ${MAX_VALUE_DEPTH} levels deep`,
      );
  if (!jsonValue.safeParse(output).success)
    throw new SandboxError('uncopyable', input.node.name, 'the after-query code’s value is not plain JSON');
  const checked = database.safeParse(db);
  if (!checked.success)
    throw new SandboxError(
      'uncopyable',
      input.node.name,
      'the after-query code left `db` as something other than an object of plain JSON values',
    );
  return { ok: true, value: { output: output as Json, database: checked.data } };
}
