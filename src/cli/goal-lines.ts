/**
 * `meta-agent run` without a terminal: one line per step on stdout (`step 3 · write_to_file {…} → Wrote
 * 5 bytes to a.txt`), warnings and refusals as lines of their own, and a summary when the run ends.
 * Model and tool text is untrusted: it is flattened to one line and stripped of terminal controls.
 */
import type { EventBus, GoalSpend } from '../events.js';
import type { RunState } from '../autonomous/run-state.js';
import { terminalSafe } from '../tui/terminal-safe.js';

/** Characters of a command's arguments or result shown on a step's line. */
const SHOWN_CHARS = 160;

/** Prints the run's steps as lines; returns a function that stops. */
export function printGoalLines(bus: EventBus, write: (line: string) => void): () => void {
  // The arguments of each step's command, kept until its result line is written.
  const lastArgs = new Map<number, Record<string, unknown>>();
  // Spend so far, shown at the end of each step's line: what a run costs is visible as it goes.
  let spent = '';
  return bus.on((event) => {
    switch (event.type) {
      case 'goal.spend':
        spent = `${new Intl.NumberFormat('en-US').format(event.tokens)} tokens · $${event.costUsd.toFixed(4)}`;
        return;
      case 'goal.result':
        write(
          `step ${event.step} · ${event.name} ${excerpt(JSON.stringify(lastArgs.get(event.step) ?? {}))} → ${event.ok ? '' : 'failed: '}${excerpt(event.output)} [${spent}]\n`,
        );
        return;
      case 'goal.command':
        lastArgs.clear();
        lastArgs.set(event.step, event.args);
        return;
      case 'goal.unusable':
        write(`step ${event.step} · unusable answer (${event.streak} in a row): ${excerpt(event.problem)}\n`);
        return;
      case 'goal.refused':
        write(
          `step ${event.step} · ${event.name} ${excerpt(JSON.stringify(lastArgs.get(event.step) ?? {}))} not run${event.feedback ? `: feedback "${excerpt(event.feedback)}"` : ''}\n`,
        );
        return;
      case 'goal.warning':
        write(`step ${event.step} · ${event.kind} warning: ${excerpt(event.message)}\n`);
        return;
      default:
        return;
    }
  });
}

/**
 * `ended: task_complete (wrote the file) · 4 steps · 1,234 tokens · local · 0.4 s`, of a run that spent
 * `spend` (budget.ts's `spendOf`: this module leaves it to the caller, so that printing the lines of a
 * goal_loop node, as `call` and `chat` do, loads nothing of the run file's schema).
 */
export function runSummary(ended: RunState['ended'], spend: GoalSpend): string {
  return `ended: ${ended?.reason ?? 'not ended'}${ended ? ` (${excerpt(ended.detail)})` : ''} · ${spendLine(spend)}`;
}

/** `4 steps · 1,234 tokens · $0.0012 · 12.3 s`, limits after a slash where there are some. */
export function spendLine(spend: GoalSpend): string {
  const count = new Intl.NumberFormat('en-US');
  const of = (limit: number | undefined, show: (n: number) => string) =>
    limit === undefined ? '' : ` of ${show(limit)}`;
  return [
    `${spend.steps}${of(spend.maxSteps, String)} ${(spend.maxSteps ?? spend.steps) === 1 ? 'step' : 'steps'}`,
    `${count.format(spend.tokens)}${of(spend.maxTokens, (n) => count.format(n))} tokens`,
    `$${spend.costUsd.toFixed(4)}${of(spend.maxCostUsd, (n) => `$${n}`)}`,
    `${(spend.elapsedMs / 1000).toFixed(1)}${of(spend.maxTimeMs, (n) => `${n / 1000}`)} s`,
  ].join(' · ');
}

function excerpt(text: string): string {
  const flat = terminalSafe(text).replace(/\s+/g, ' ').trim();
  return flat.length > SHOWN_CHARS ? `${flat.slice(0, SHOWN_CHARS)}…` : flat;
}
