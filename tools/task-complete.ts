/** `task_complete {reason}`: the model says every goal is met; the run ends with its reason. */
import { z } from 'zod';
import { defineCommand } from './command.js';

export const taskComplete = defineCommand({
  name: 'task_complete',
  title: 'Task Complete (Shutdown)',
  description: 'Ends the run when every goal is met (or cannot be met); give the reason.',
  args: z.object({ reason: z.string().min(1).describe('reason') }),
  effect: 'none',
  needs: [],
  run: async ({ reason }) => ({ output: 'Shutting down.', complete: reason }),
});
