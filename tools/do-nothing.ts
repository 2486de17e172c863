/** `do_nothing {}`: a step that changes nothing, for a model that wants to think before it acts. */
import { z } from 'zod';
import { defineCommand } from './command.js';

export const doNothing = defineCommand({
  name: 'do_nothing',
  title: 'Do Nothing',
  description: 'Takes a step without doing anything. Returns "No action performed."',
  args: z.object({}),
  effect: 'none',
  needs: [],
  run: async () => 'No action performed.',
});
