/** `append_to_file {file, text}`: the seed's command that adds text at the end of a workspace file. */
import { z } from 'zod';
import { defineCommand } from './command.js';
import { describeBytes } from './workspace.js';
import { workspacePath } from './workspace-path.js';

export const appendToFile = defineCommand({
  name: 'append_to_file',
  title: 'Append to file',
  description:
    'Adds text at the end of a file in the workspace (path relative to it), creating the file when it does not exist. Returns how many bytes were added, and how they begin.',
  args: z.object({
    file: z.string().describe('file'),
    text: z.string().describe('text'),
  }),
  effect: 'write',
  needs: ['workspace'],
  async run({ file, text }, { workspace }) {
    await workspace.append(file, text);
    const path = workspacePath(file);
    return {
      // What was added, in short: appending different lines to one file is steady work, not a loop.
      output: `Appended ${describeBytes(Buffer.byteLength(text))} to ${path}: ${JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text)}.`,
      files: [{ path, change: 'append' }],
    };
  },
});
