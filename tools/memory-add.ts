/** `memory_add {string}`: keeps a text in long-term memory, where later steps' prompts can recall it. */
import { z } from 'zod';
import { defineCommand } from './command.js';

export const memoryAdd = defineCommand({
  name: 'memory_add',
  title: 'Memory Add',
  description:
    'Saves a text to long-term memory; the most relevant memories are shown to you in later steps. Returns the memory id.',
  args: z.object({ string: z.string().min(1).describe('string') }),
  effect: 'write',
  needs: ['memory'],
  run: async ({ string }, { memory }) =>
    `Committing memory with string "${string.length > 80 ? `${string.slice(0, 80)}…` : string}" (id ${await memory.add(string)}).`,
});
