/** `write_to_file {file, text}`: the seed's command that replaces (or creates) a workspace file. */
import { z } from 'zod';
import { defineCommand } from './command.js';
import { describeBytes } from './workspace.js';
import { workspacePath } from './workspace-path.js';

export const writeToFile = defineCommand({
  name: 'write_to_file',
  title: 'Write to file',
  description:
    'Writes text to a file in the workspace (path relative to it), replacing what the file held and creating its folders. Returns how many bytes were written.',
  args: z.object({
    file: z.string().describe('file'),
    text: z.string().describe('text'),
  }),
  effect: 'write',
  needs: ['workspace'],
  async run({ file, text }, { workspace }) {
    await workspace.write(file, text);
    const path = workspacePath(file);
    return {
      output: `Wrote ${describeBytes(Buffer.byteLength(text))} to ${path}.`,
      files: [{ path, change: 'write' }],
    };
  },
});
