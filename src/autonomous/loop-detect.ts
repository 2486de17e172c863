/**
 * Noticing that a goal loop goes round in circles, from the commands it ran. AutoGPT forge's watchdog
 * only catches the same command twice; this also catches two commands taking turns, and different
 * commands that keep getting the same answer. First a warning to the model, then a stop.
 */
import { canonicalJson } from '../canonical-json.js';

/** One executed command of the run. */
export interface LoopStep {
  step: number;
  command: string;
  args: Record<string, unknown>;
  /** The output the model saw. */
  result: string;
}

/** A loop found in the latest steps. */
export interface DetectedLoop {
  /** `repeat`: one call three times; `alternation`: A-B-A-B; `same-result`: different calls, one answer. */
  kind: 'repeat' | 'alternation' | 'same-result';
  /** The step numbers that make the pattern. */
  steps: number[];
  /** Said to the model: what it repeats and what to do instead. */
  message: string;
}

/** What the loop should do about the latest step. */
export type LoopVerdict =
  { verdict: 'ok' } | { verdict: 'warn'; message: string } | { verdict: 'stop'; message: string };

/** A warning counts for this many steps; a loop found again within them stops the run. */
const WARNING_SPAN = 3;

const SHOW_LIMIT = 80;

const ADVICE =
  'Doing it again will not help: try something different, or call task_complete if the task is done.';

/** The loop the last steps make, if any; an exact repeat is reported before the looser patterns. */
export function detectLoop(steps: readonly LoopStep[]): DetectedLoop | undefined {
  const found = findPattern(steps);
  return found && { kind: found.kind, steps: found.steps, message: `You ${found.what}. ${ADVICE}` };
}

/**
 * Warns the first time a loop shows; stops the run when one shows again at most three steps after the
 * last warning (`lastWarningStep`). A warning longer ago than that is forgotten, and warns again.
 */
export function judgeLoop(steps: readonly LoopStep[], lastWarningStep: number | undefined): LoopVerdict {
  const found = findPattern(steps);
  if (!found) return { verdict: 'ok' };
  const step = steps.at(-1)!.step;
  if (lastWarningStep !== undefined && step - lastWarningStep <= WARNING_SPAN)
    return {
      verdict: 'stop',
      message: `Stopped at step ${step}: the model ${found.what}, again within ${WARNING_SPAN} steps of the warning at step ${lastWarningStep}.`,
    };
  return { verdict: 'warn', message: `You ${found.what}. ${ADVICE}` };
}

interface Pattern {
  kind: DetectedLoop['kind'];
  steps: number[];
  /** The pattern as a verb phrase: "ran do_nothing {} three times in a row (steps 1, 2, 3)". */
  what: string;
}

function findPattern(steps: readonly LoopStep[]): Pattern | undefined {
  const last3 = steps.slice(-3);
  const last4 = steps.slice(-4);
  const calls = (list: readonly LoopStep[]) => list.map(callKey);
  const numbers = (list: readonly LoopStep[]) => list.map((step) => step.step);
  if (last3.length === 3 && new Set(calls(last3)).size === 1)
    return {
      kind: 'repeat',
      steps: numbers(last3),
      what: `ran ${showCall(last3[0]!)} three times in a row (steps ${numbers(last3).join(', ')})`,
    };
  if (last4.length === 4) {
    const [a, b, c, d] = calls(last4);
    if (a === c && b === d && a !== b)
      return {
        kind: 'alternation',
        steps: numbers(last4),
        what: `alternated between ${showCall(last4[0]!)} and ${showCall(last4[1]!)} (steps ${numbers(last4).join(', ')})`,
      };
  }
  const results = new Set(last3.map((step) => step.result.trim()));
  if (last3.length === 3 && results.size === 1 && !results.has(''))
    return {
      kind: 'same-result',
      steps: numbers(last3),
      what: `got the same result from three commands in a row (steps ${numbers(last3).join(', ')}: ${last3.map((step) => step.command).join(', ')}): ${shorten(JSON.stringify(last3[0]!.result.trim()))}`,
    };
  return undefined;
}

/** A command and its arguments with keys sorted at every depth, so that key order does not matter. */
function callKey(step: LoopStep): string {
  return `${step.command} ${canonicalJson(step.args)}`;
}

function showCall(step: LoopStep): string {
  return shorten(callKey(step));
}

function shorten(text: string): string {
  return text.length > SHOW_LIMIT ? `${text.slice(0, SHOW_LIMIT - 1)}…` : text;
}
