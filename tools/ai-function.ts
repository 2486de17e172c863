/**
 * AutoGPT 0.2.x's `call_ai_function`: the model plays a function, given its signature, a one-line
 * description and the arguments, and answers with only its return value. evaluate_code, improve_code
 * and write_tests are built on it, as AutoGPT's are. The question goes through the run's `ask`
 * resource, so it is metered like any other call; the answer is the model's, given back as it is.
 */
import type { AskModel } from './command.js';

/** What the model is told to be and what it gets. */
export interface AiFunction {
  /** The signature, as AutoGPT words it: `def analyze_code(code: str) -> list[str]:`. */
  signature: string;
  description: string;
  /** The arguments in order; each one as text (lists as JSON, as AutoGPT sends them). */
  args: readonly string[];
}

/**
 * AutoGPT sends the function as a system message and the arguments as the user's; `ask` takes one
 * message, so both go in it, the function first, then the arguments, as AutoGPT joins them.
 */
function aiFunctionPrompt(fn: AiFunction): string {
  return [
    `You are now the following python function: \`\`\`# ${fn.description}\n${fn.signature}\`\`\``,
    '',
    'Only respond with your `return` value.',
    '',
    fn.args.join(', '),
  ].join('\n');
}

/** Asks the model to play `fn`; its answer, trimmed. An empty answer is said to be one. */
export async function callAiFunction(
  ask: AskModel,
  fn: AiFunction,
  purpose: string,
  signal: AbortSignal,
): Promise<string> {
  const answer = (await ask(aiFunctionPrompt(fn), purpose, signal)).trim();
  return answer === '' ? `${purpose}: the model answered nothing` : answer;
}

/** A list argument as AutoGPT sends it (JSON); one the model gave as a plain string stays one item. */
export function listArgument(value: string | readonly string[]): string {
  return JSON.stringify(typeof value === 'string' ? [value] : value);
}
