/**
 * How a user continues a goal run that stopped, as the exact command to type: a run that ran out of a
 * budget resumes only with that budget raised (resuming it as it was would end it again at once), so
 * the command raises it, to twice the limit it reached.
 */
import type { RunState } from '../autonomous/run-state.js';

/** The flag and value that raise the budget `state` ended on (`--max-steps 100`); undefined for other ends. */
export function raisedLimit(state: RunState): string | undefined {
  const { budget } = state;
  switch (state.ended?.reason) {
    case 'max_steps':
      return budget.maxSteps === undefined ? undefined : `--max-steps ${budget.maxSteps * 2}`;
    case 'max_tokens':
      return budget.maxTokens === undefined ? undefined : `--max-tokens ${budget.maxTokens * 2}`;
    case 'max_cost':
      return budget.maxCostUsd === undefined ? undefined : `--max-cost ${budget.maxCostUsd * 2}`;
    case 'max_time':
      return budget.maxTimeMs === undefined ? undefined : `--max-time ${Math.ceil(budget.maxTimeMs / 500)}`;
    default:
      return undefined;
  }
}

/**
 * What to tell the user who would continue the run `state` (`resume` is how the run is named again:
 * `--resume FILE`): the command, with the budget it ran out of raised.
 */
export function continueAdvice(state: RunState, resume: string): string {
  const raised = raisedLimit(state);
  if (raised === undefined) return `continue it with meta-agent run ${resume}`;
  const flag = raised.slice(0, raised.indexOf(' '));
  return `it reached its ${flag} limit: continue it with a higher one, e.g. meta-agent run ${resume} ${raised}`;
}
