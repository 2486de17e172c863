/**
 * Budgets, decided before a model call is sent (never after the money is spent): steps, tokens, dollars
 * and time, and the model's context, which the prompt and the answer share. A call goes out only when
 * the prompt and the smallest useful answer still fit; the answer's length is capped to what is left. Past SOFT_LIMIT of any budget the run says so once and, when a user
 * can answer, asks before every command from then on. Pure: the loop supplies the figures.
 */
import type { GoalEndReason, GoalSpend } from '../events.js';
import { priceOf } from '../llm/usage.js';
import { tokensUsed, type RunState } from './run-state.js';

/** The share of a budget past which the user is asked before every command. */
export const SOFT_LIMIT = 0.8;

/** The model's context window, in tokens, when none is given: the least a current chat model has. */
export const CONTEXT_TOKENS = 8192;

/** The longest answer a step asks for; a seed-format answer is a few hundred tokens. */
export const ANSWER_TOKENS = 2048;

/** An answer shorter than this could not hold a command: no call is sent for less. */
export const MIN_ANSWER_TOKENS = 256;

/**
 * The room a prompt leaves in a context of `contextTokens` for the answer: a full answer where the
 * context is large, a quarter of it where it is small, never less than the smallest useful answer.
 */
export function answerRoom(contextTokens: number): number {
  return Math.max(MIN_ANSWER_TOKENS, Math.min(ANSWER_TOKENS, Math.floor(contextTokens / 4)));
}

/** What the next call needs to know. */
export interface CallFigures {
  promptTokens: number;
  modelName: string;
  /** The model's context window in tokens: the prompt and the answer must fit in it together. */
  contextTokens: number;
  /** Time the run has taken, this session's included. */
  elapsedMs: number;
}

export type BudgetCheck =
  | {
      ok: true;
      /** The answer's token cap for this call. */
      maxTokens: number;
      /** Budgets past their soft limit that were not reported yet, with a sentence each. */
      soft: Array<{ budget: string; message: string }>;
    }
  | { ok: false; reason: GoalEndReason; detail: string };

/** Whether the next call may be sent, and with how long an answer. */
export function checkBudget(state: RunState, call: CallFigures): BudgetCheck {
  const { budget, used } = state;
  if (budget.maxSteps !== undefined && used.steps >= budget.maxSteps)
    return { ok: false, reason: 'max_steps', detail: `the ${budget.maxSteps}-step limit was reached` };
  if (budget.maxTimeMs !== undefined && call.elapsedMs >= budget.maxTimeMs)
    return {
      ok: false,
      reason: 'max_time',
      detail: `the ${seconds(budget.maxTimeMs)} time limit was reached`,
    };
  const room = call.contextTokens - call.promptTokens;
  if (room < MIN_ANSWER_TOKENS)
    return {
      ok: false,
      reason: 'max_tokens',
      detail: `the prompt (${count(call.promptTokens)} tokens) leaves less than ${MIN_ANSWER_TOKENS} of the model's ${count(call.contextTokens)}-token context for the answer; raise --context-tokens`,
    };
  let maxTokens = Math.min(ANSWER_TOKENS, room);
  if (budget.maxTokens !== undefined) {
    const left = budget.maxTokens - tokensUsed(state) - call.promptTokens;
    if (left < MIN_ANSWER_TOKENS)
      return {
        ok: false,
        reason: 'max_tokens',
        detail: `the next call needs ${call.promptTokens + MIN_ANSWER_TOKENS} tokens and ${Math.max(0, budget.maxTokens - tokensUsed(state))} of ${budget.maxTokens} are left`,
      };
    maxTokens = Math.min(maxTokens, left);
  }
  const price = priceOf(call.modelName);
  if (budget.maxCostUsd !== undefined && price) {
    const left = budget.maxCostUsd - used.costUsd - (call.promptTokens * price.input) / 1e6;
    const affordable = price.output > 0 ? Math.floor((left * 1e6) / price.output) : ANSWER_TOKENS;
    if (affordable < MIN_ANSWER_TOKENS)
      return {
        ok: false,
        reason: 'max_cost',
        detail: `the next call could cost more than the $${Math.max(0, budget.maxCostUsd - used.costUsd).toFixed(4)} left of $${budget.maxCostUsd}`,
      };
    maxTokens = Math.min(maxTokens, affordable);
  }
  return { ok: true, maxTokens, soft: softLimits(state, call.elapsedMs) };
}

/** The budgets past SOFT_LIMIT that were not reported yet. */
function softLimits(state: RunState, elapsedMs: number): Array<{ budget: string; message: string }> {
  const { budget, used } = state;
  const shares: Array<[string, number | undefined, number, (n: number) => string]> = [
    ['steps', budget.maxSteps, used.steps, (n) => `${n} steps`],
    ['tokens', budget.maxTokens, tokensUsed(state), (n) => `${n} tokens`],
    ['cost', budget.maxCostUsd, used.costUsd, (n) => `$${n}`],
    ['time', budget.maxTimeMs, elapsedMs, seconds],
  ];
  const soft: Array<{ budget: string; message: string }> = [];
  for (const [name, limit, spent, show] of shares) {
    if (limit === undefined || state.softWarned.includes(name) || spent < limit * SOFT_LIMIT) continue;
    soft.push({
      budget: name,
      message: `${Math.round((spent / limit) * 100)}% of the ${name} budget (${show(limit)}) is used: finish the most important goal, then call task_complete.`,
    });
  }
  return soft;
}

/** What the run has spent, with its limits, as events report it. */
export function spendOf(state: RunState, elapsedMs: number): GoalSpend {
  const { budget, used } = state;
  return {
    steps: used.steps,
    tokens: tokensUsed(state),
    costUsd: used.costUsd,
    elapsedMs: Math.round(elapsedMs),
    ...(budget.maxSteps !== undefined && { maxSteps: budget.maxSteps }),
    ...(budget.maxTokens !== undefined && { maxTokens: budget.maxTokens }),
    ...(budget.maxCostUsd !== undefined && { maxCostUsd: budget.maxCostUsd }),
    ...(budget.maxTimeMs !== undefined && { maxTimeMs: budget.maxTimeMs }),
  };
}

/** One line for the prompt: what is left of each budget. */
export function budgetLine(state: RunState, elapsedMs: number): string {
  const { budget, used } = state;
  const parts = [
    budget.maxSteps !== undefined ? `step ${used.steps + 1} of ${budget.maxSteps}` : `step ${used.steps + 1}`,
  ];
  if (budget.maxTokens !== undefined) parts.push(`${budget.maxTokens - tokensUsed(state)} tokens left`);
  if (budget.maxCostUsd !== undefined)
    parts.push(`$${Math.max(0, budget.maxCostUsd - used.costUsd).toFixed(4)} left`);
  if (budget.maxTimeMs !== undefined)
    parts.push(`${seconds(Math.max(0, budget.maxTimeMs - elapsedMs))} left`);
  return `Budget: ${parts.join(', ')}.`;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)} s`;
}
