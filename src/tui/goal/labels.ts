/** The goal view's words for authorizations, run ends and spend: shared by the steps, status bar and end. */
import type { Authorization, GoalEndReason, GoalSpend } from '../../events.js';
import { priceOf } from '../../llm/usage.js';
import { formatCost, formatCount, formatElapsed } from '../format.js';

/** How a command came to run, in a few words. */
export function authorizationText(by: Authorization): string {
  switch (by) {
    case 'user':
      return 'approved by you';
    case 'yes':
      return 'allowed by --yes';
    case 'continuous':
      return 'countdown (y -N)';
    case 'allow-rule':
      return 'allow rule';
    case 'no-effect':
      return 'no approval needed';
  }
}

/** What each end reason means. */
const ENDINGS: Record<GoalEndReason, string> = {
  task_complete: 'the model says the task is complete',
  max_steps: 'the step limit was reached',
  max_tokens: 'the token budget was used up',
  max_cost: 'the cost budget was used up',
  max_time: 'the time limit was reached',
  user: 'you stopped the run',
  loop: 'the model went round in a loop',
  unusable_answers: 'the model gave unusable answers',
  refused: 'commands were refused with nobody to ask',
  continuous_limit: 'the commands --continuous allowed have run, with nobody to ask for more',
};

/** `task_complete (the model says the task is complete)`. */
export function endText(reason: GoalEndReason): string {
  return `${reason} (${ENDINGS[reason]})`;
}

/** What the status bar and the end screen say about spend. */
export interface SpendFigures {
  steps: string;
  tokens: string;
  cost: string;
  time: string;
}

/**
 * `3/50`, `1,234/10k`, `$0.0012/$1.00` (or `local` when nothing was spent on a model without a price,
 * scripted included), `12s/5m 00s`; no limit, no slash.
 */
export function spendFigures(spend: GoalSpend, model: string, scripted: boolean): SpendFigures {
  const of = (limit: number | undefined, show: (n: number) => string) =>
    limit === undefined ? '' : `/${show(limit)}`;
  const local = spend.costUsd === 0 && (scripted || priceOf(model) === undefined);
  return {
    steps: `${spend.steps}${of(spend.maxSteps, String)}`,
    tokens: `${formatCount(spend.tokens)}${of(spend.maxTokens, formatCount)}`,
    cost: local ? 'local' : `${formatCost(spend.costUsd)}${of(spend.maxCostUsd, formatCost)}`,
    time: `${formatElapsed(spend.elapsedMs)}${of(spend.maxTimeMs, formatElapsed)}`,
  };
}
