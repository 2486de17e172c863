/**
 * A goal-loop run as a value (the OpenAI Agents SDK's RunState idea): goals, history, the command
 * waiting for approval or running, the countdown of `y -N`, what was spent, and how it ended. Plain
 * JSON, saved after every phase of a step (run-file.ts), so a run killed at any moment resumes from the
 * last phase it finished. Read back from a file, it is untrusted: the schema checks every field.
 */
import { z } from 'zod';
import { InvalidFileError } from '../errors.js';
import { nodeCrypto } from '../lazy-crypto.js';
import type { GoalEndReason } from '../events.js';
import { pathBeyondDepth } from '../graph/json-depth.js';

export const RUN_FORMAT = 'meta-agent/run@1';

/**
 * The deepest a run file may nest: far past what a run writes (command arguments are checked to
 * MAX_ARGS_DEPTH), and far short of where writing it back would overflow the stack.
 */
export const MAX_RUN_DEPTH = 256;

const thoughtsSchema = z.object({
  text: z.string(),
  reasoning: z.string(),
  plan: z.string(),
  criticism: z.string(),
  speak: z.string(),
});

const commandSchema = z.object({ name: z.string(), args: z.record(z.string(), z.unknown()) });

const fileTouchSchema = z.object({
  path: z.string(),
  change: z.enum(['read', 'write', 'append', 'delete', 'list']),
});

const entrySchema = z.discriminatedUnion('kind', [
  /** A command that ran (or failed while running). */
  z.object({
    kind: z.literal('command'),
    step: z.number().int(),
    thoughts: thoughtsSchema,
    command: commandSchema,
    ok: z.boolean(),
    output: z.string(),
    files: z.array(fileTouchSchema),
  }),
  /** A command the user refused, or answered with feedback instead. */
  z.object({
    kind: z.literal('refused'),
    step: z.number().int(),
    thoughts: thoughtsSchema,
    command: commandSchema,
    message: z.string(),
  }),
  /** An answer that could not be used, and what the model was told. */
  z.object({ kind: z.literal('unusable'), step: z.number().int(), answer: z.string(), problem: z.string() }),
  /** A command with a side effect the run was stopped in the middle of: it is never run again. */
  z.object({
    kind: z.literal('interrupted'),
    step: z.number().int(),
    thoughts: thoughtsSchema,
    command: commandSchema,
  }),
  /** Something the model is told between steps: a loop warning, a budget running low. */
  z.object({ kind: z.literal('notice'), step: z.number().int(), text: z.string() }),
]);

export type HistoryEntry = z.infer<typeof entrySchema>;

const pendingSchema = z.object({
  step: z.number().int(),
  thoughts: thoughtsSchema,
  command: commandSchema,
  /**
   * How far the command got: `answered` (authorization not given yet: ask again on resume),
   * `approved` (not started: safe to run), `running` (may have happened: a side effect is not repeated).
   */
  phase: z.enum(['answered', 'approved', 'running']),
  /** How it was authorized, once it was. */
  by: z.enum(['user', 'yes', 'continuous', 'allow-rule', 'no-effect']).optional(),
});

export type PendingCommand = z.infer<typeof pendingSchema>;

const budgetSchema = z.object({
  maxSteps: z.number().int().positive().optional(),
  maxTokens: z.number().int().positive().optional(),
  maxCostUsd: z.number().positive().optional(),
  maxTimeMs: z.number().positive().optional(),
});

export type Budget = z.infer<typeof budgetSchema>;

const runStateSchema = z.object({
  format: z.literal(RUN_FORMAT),
  id: z.string().regex(/^[0-9a-f]{8,32}$/),
  agent: z.object({
    name: z.string().min(1),
    role: z.string(),
    goals: z.array(z.string().min(1)).min(1).max(5),
  }),
  /** The workspace's absolute path; commands are confined to it. */
  workspace: z.string().min(1),
  budget: budgetSchema,
  used: z.object({
    steps: z.number().int().nonnegative(),
    promptTokens: z.number().int().nonnegative(),
    completionTokens: z.number().int().nonnegative(),
    costUsd: z.number().nonnegative(),
    elapsedMs: z.number().nonnegative(),
  }),
  history: z.array(entrySchema),
  pending: pendingSchema.optional(),
  /** Commands left that run without asking (`y -N`, `--continuous N`). */
  continuousLeft: z.number().int().nonnegative(),
  /** Unusable answers in a row; the third ends the run. */
  unusableStreak: z.number().int().nonnegative(),
  /** Refusals in a row with nobody to ask; the second ends the run. */
  refusedStreak: z.number().int().nonnegative(),
  /** The step of the last loop warning. */
  loopWarnedAt: z.number().int().optional(),
  /** Budgets whose soft limit was reported already (so it is said once). */
  softWarned: z.array(z.string()),
  /** Set once a soft limit is reached: every command is asked for from then on, when someone can answer. */
  askAlways: z.boolean(),
  /** `json` once the server refused native tool calls (the rest of the run answers in JSON text). */
  answerFormat: z.enum(['auto', 'tools', 'json']),
  /** The sub-agents' conversations (tools/sub-agents.ts snapshot). */
  agents: z.unknown().optional(),
  /** The long-term memory namespace the run remembers and recalls in; absent: none. */
  memory: z.string().optional(),
  /**
   * The seal of the run's consent (its approved command and `y -N` countdown) under the user's key
   * (consent.ts): without it, or when it does not verify, a resumed run asks again.
   */
  consent: z.string().optional(),
  ended: z
    .object({
      reason: z.enum([
        'task_complete',
        'max_steps',
        'max_tokens',
        'max_cost',
        'max_time',
        'user',
        'loop',
        'unusable_answers',
        'refused',
        'continuous_limit',
      ] satisfies GoalEndReason[]),
      detail: z.string(),
    })
    .optional(),
});

export type RunState = z.infer<typeof runStateSchema>;

/** The answer format a run uses: native tool calls where the server takes them, else the seed's JSON. */
export type AnswerFormat = RunState['answerFormat'];

/** The role of a run whose user gave none (`meta-agent run`, a run started over HTTP). */
export const DEFAULT_ROLE =
  'an AI that pursues the goals below with the commands it has, and stops when they are met.';

export interface NewRun {
  name: string;
  role: string;
  goals: string[];
  workspace: string;
  budget: Budget;
  continuous?: number;
  answerFormat?: AnswerFormat;
  memory?: string;
}

/** A run that has not taken a step yet. */
export function newRunState(run: NewRun): RunState {
  return {
    format: RUN_FORMAT,
    id: nodeCrypto().randomBytes(6).toString('hex'),
    agent: { name: run.name, role: run.role, goals: run.goals },
    workspace: run.workspace,
    budget: run.budget,
    used: { steps: 0, promptTokens: 0, completionTokens: 0, costUsd: 0, elapsedMs: 0 },
    history: [],
    continuousLeft: run.continuous ?? 0,
    unusableStreak: 0,
    refusedStreak: 0,
    softWarned: [],
    askAlways: false,
    answerFormat: run.answerFormat ?? 'auto',
    ...(run.memory !== undefined && { memory: run.memory }),
  };
}

/** Checks a value read from a file; the error names the first wrong field. */
export function parseRunState(
  value: unknown,
): { ok: true; state: RunState } | { ok: false; problem: string } {
  if (pathBeyondDepth(value, MAX_RUN_DEPTH) !== undefined)
    return { ok: false, problem: `it nests more than ${MAX_RUN_DEPTH} levels deep, which no run does` };
  const parsed = runStateSchema.safeParse(value);
  if (parsed.success) return { ok: true, state: parsed.data };
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? issue.path.join('.') : 'top level';
  return { ok: false, problem: `${where}: ${issue?.message ?? 'unexpected shape'}` };
}

/** The run saved as `value` under `source` (a run file's path); anything else is an InvalidFileError. */
export function loadedRunState(value: unknown, source: string): RunState {
  const parsed = parseRunState(value);
  if (!parsed.ok) throw new InvalidFileError(`${source} is not a usable run file: ${parsed.problem}`);
  return parsed.state;
}

/** Tokens spent so far, prompt and completion together. */
export function tokensUsed(state: RunState): number {
  return state.used.promptTokens + state.used.completionTokens;
}
