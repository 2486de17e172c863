/**
 * `evaluate_code` as AutoGPT 0.2.x has it: the model reviews the code and answers with a list of
 * suggestions to improve it. Nothing is run (running JavaScript is execute_javascript).
 */
import { z } from 'zod';
import { callAiFunction } from './ai-function.js';
import { defineCommand } from './command.js';

export const evaluateCode = defineCommand({
  name: 'evaluate_code',
  title: 'Evaluate Code',
  description:
    'Has the model review the code (any language) and returns its list of suggestions for ' +
    'improvements. The code is read, not run.',
  args: z.object({ code: z.string().describe('full_code_string') }),
  effect: 'compute',
  needs: ['ask'],
  run: ({ code }, { ask, signal }) =>
    callAiFunction(
      ask,
      {
        signature: 'def analyze_code(code: str) -> list[str]:',
        description: 'Analyzes the given code and returns a list of suggestions for improvements.',
        args: [code],
      },
      'evaluate_code',
      signal,
    ),
});
