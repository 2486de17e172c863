/**
 * `improve_code` as AutoGPT 0.2.x has it: the model rewrites the code following the suggestions,
 * making no other change, and answers with the improved code (which it does not save: write_to_file
 * does).
 */
import { z } from 'zod';
import { callAiFunction, listArgument } from './ai-function.js';
import { defineCommand } from './command.js';

export const improveCode = defineCommand({
  name: 'improve_code',
  title: 'Get Improved Code',
  description:
    'Has the model rewrite the code following the suggestions, making no other changes, and returns ' +
    'the improved code. It saves nothing: write it to a file yourself.',
  args: z.object({
    suggestions: z.union([z.array(z.string()), z.string()]).describe('list_of_suggestions'),
    code: z.string().describe('full_code_string'),
  }),
  effect: 'compute',
  needs: ['ask'],
  run: ({ suggestions, code }, { ask, signal }) =>
    callAiFunction(
      ask,
      {
        signature: 'def generate_improved_code(suggestions: list[str], code: str) -> str:',
        description: 'Improves the provided code based on the suggestions provided, making no other changes.',
        args: [listArgument(suggestions), code],
      },
      'improve_code',
      signal,
    ),
});
