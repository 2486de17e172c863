/**
 * `write_tests` as AutoGPT 0.2.x has it: the model writes test cases for the code, on the areas named
 * in `focus` when there are some, and answers with them (saved by write_to_file, run by whoever can).
 */
import { z } from 'zod';
import { callAiFunction, listArgument } from './ai-function.js';
import { defineCommand } from './command.js';

export const writeTests = defineCommand({
  name: 'write_tests',
  title: 'Write Tests',
  description:
    'Has the model write test cases for the code, focused on the listed areas, and returns them. ' +
    'It saves and runs nothing: write them to a file yourself.',
  args: z.object({
    code: z.string().describe('full_code_string'),
    focus: z
      .union([z.array(z.string()), z.string()])
      .optional()
      .describe('list_of_focus_areas'),
  }),
  effect: 'compute',
  needs: ['ask'],
  run: ({ code, focus }, { ask, signal }) =>
    callAiFunction(
      ask,
      {
        signature: 'def create_test_cases(code: str, focus: Optional[str] = None) -> str:',
        description: 'Generates test cases for the existing code, focusing on specific areas if required.',
        // AutoGPT sends json.dumps(focus): `null` when there is none.
        args: [code, focus === undefined ? 'null' : listArgument(focus)],
      },
      'write_tests',
      signal,
    ),
});
