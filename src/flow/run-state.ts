/**
 * A flow's run as plain JSON: the database, the last output of every node (what a skip reuses) and the
 * pass in progress, with its committed results and its temporary changes. It is saved after every step,
 * so a pass stopped anywhere goes on from its last step, and the next pass starts from the database the
 * last one left, as a conversation goes on from its last reply.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { InvalidFileError, UserError } from '../errors.js';
import { checkJsonDepth, MAX_JSON_DEPTH } from '../graph/json-depth.js';
import { parseJsonText, writeFileAtomic } from '../graph/load.js';
import { summarizeIssues } from '../graph/schema-issues.js';
import { flowNodeSchema, type FlowFile } from './schema.js';

export const FLOW_RUN_FORMAT = 'meta-agent/flow-run@1';

const json = z.json();

/**
 * How deep a saved run may nest: the values a run keeps nest as deep as a flow file's database
 * (after-query.ts), and sit a few levels deeper here (`current.results.NODE.output` is 5 down).
 */
const MAX_RUN_DEPTH = MAX_JSON_DEPTH + 8;

const changeSchema = z.discriminatedUnion('op', [
  z.strictObject({ op: z.literal('add-node'), node: flowNodeSchema }),
  z.strictObject({ op: z.literal('add-edge'), from: z.string(), to: z.string() }),
  z.strictObject({ op: z.literal('remove-edge'), from: z.string(), to: z.string() }),
  z.strictObject({ op: z.literal('skip'), node: z.string() }),
]);

/** How one node of a pass ended; see Settlement in dag.ts. */
const nodeResultSchema = z.strictObject({
  status: z.enum(['done', 'failed', 'reused', 'blocked']),
  /** For done and reused nodes. */
  output: json.optional(),
  /** The prompt it was asked (for done and reused nodes): dependents' compositions show it. */
  prompt: z.string().optional(),
  /** Tokens its calls used in this pass (0 when reused or blocked). */
  tokens: z.number().int().nonnegative(),
  attempts: z.number().int().nonnegative().default(0),
  /** The fallback replaced answers the after-query step rejected. */
  fellBack: z.boolean().optional(),
  /** Why it failed, the rejection its fallback replaced, or the failed node that blocked it. */
  detail: z.string().optional(),
  /** Blocked: the failed node upstream of it. */
  upstream: z.string().optional(),
  /** Reused: the tokens its last run used, which the skip saved. */
  savedTokens: z.number().int().nonnegative().optional(),
  /** The step it ran in (done or failed): a change that comes too late says so. */
  step: z.number().int().positive().optional(),
  /** The model that answered it (or was asked, for a failed node): its name as the server knows it. */
  model: z.string().optional(),
});
export type NodeResult = z.infer<typeof nodeResultSchema>;

/** A result with an output must carry it and the prompt it answered: dependents' prompts show both. */
const checkedResultSchema = nodeResultSchema.refine(
  (result) =>
    (result.status !== 'done' && result.status !== 'reused') ||
    (result.output !== undefined && result.prompt !== undefined),
  { message: 'a done or reused node needs its output and prompt' },
);

const passSchema = z.strictObject({
  pass: z.number().int().positive(),
  /** The `--input` values the pass began with (they are in the database too). */
  inputs: z.record(z.string(), z.string()),
  /** Steps committed so far. */
  steps: z.number().int().nonnegative(),
  results: z.record(z.string(), checkedResultSchema),
  changes: z.array(changeSchema),
  startedAt: z.string(),
});
export type PassState = z.infer<typeof passSchema>;

const lastOutputSchema = z.strictObject({
  output: json,
  prompt: z.string(),
  tokens: z.number().int().nonnegative(),
  pass: z.number().int().positive(),
});
export type LastOutput = z.infer<typeof lastOutputSchema>;

export const flowRunStateSchema = z.strictObject({
  format: z.literal(FLOW_RUN_FORMAT),
  flow: z.string(),
  /** The flow file's content when the run began: a pass in progress goes on only on the same flow. */
  flowHash: z.string(),
  /** Passes finished. */
  passes: z.number().int().nonnegative(),
  database: z.record(z.string(), json),
  last: z.record(z.string(), lastOutputSchema),
  current: passSchema.optional(),
});
export type FlowRunState = z.infer<typeof flowRunStateSchema>;

/** A new run of `flow`, with the database the file starts it with. */
export function newFlowRunState(flow: FlowFile): FlowRunState {
  return {
    format: FLOW_RUN_FORMAT,
    flow: flow.name,
    flowHash: flowHash(flow),
    passes: 0,
    database: structuredClone(flow.database),
    last: {},
  };
}

/**
 * A fingerprint of the flow as validated (its nodes, config and initial database). A node's empty
 * `after`, the default since order-only edges came, is left out: a pass saved before them still finishes.
 */
export function flowHash(flow: FlowFile): string {
  const { $schema: _ignored, ...rest } = flow;
  const nodes = rest.nodes.map(({ after, ...node }) => (after.length > 0 ? { ...node, after } : node));
  return createHash('sha256')
    .update(JSON.stringify({ ...rest, nodes }))
    .digest('hex')
    .slice(0, 16);
}

/**
 * The run saved at `path`, or undefined when there is no file yet. A file that is not a flow run, or a
 * run of another flow, is an InvalidFileError naming the path.
 */
export async function loadFlowRun(path: string, flow: FlowFile): Promise<FlowRunState | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UserError(`${path}: cannot read: ${(error as Error).message}`, 2);
  }
  return parseFlowRun(parseJsonText(text, path), flow, path);
}

/** The run of `flow` saved as `json` under `source`; anything else is an InvalidFileError naming it. */
export function parseFlowRun(json: unknown, flow: FlowFile, source: string): FlowRunState {
  checkJsonDepth(json, source, MAX_RUN_DEPTH);
  const parsed = flowRunStateSchema.safeParse(json);
  if (!parsed.success)
    throw new InvalidFileError(
      `${source}: not a saved flow run: ${summarizeIssues(parsed.error, json)}`,
      'pass another --state file, or delete this one to start a new run',
    );
  if (parsed.data.flow !== flow.name)
    throw new InvalidFileError(
      `${source}: holds a run of the flow "${parsed.data.flow}", not "${flow.name}"`,
      'each flow keeps its own state file',
    );
  return parsed.data;
}

/** Saves the run atomically: a reader never sees half a file. */
export async function saveFlowRun(path: string, state: FlowRunState): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(state, null, 2)}\n`);
}
