/** `read_file {file}`: the seed's command that returns a workspace file's text. */
import { z } from 'zod';
import { defineCommand } from './command.js';
import { workspacePath } from './workspace-path.js';

export const readFile = defineCommand({
  name: 'read_file',
  title: 'Read file',
  description:
    'Returns the text of a file in the workspace (path relative to it), up to 1 MiB. Folders and binary files are refused.',
  args: z.object({
    file: z.string().describe('file'),
  }),
  effect: 'read',
  needs: ['workspace'],
  async run({ file }, { workspace }) {
    const text = await workspace.read(file);
    const path = workspacePath(file);
    // An empty answer would read as if the command had failed to say anything.
    return { output: text === '' ? `${path} is empty.` : text, files: [{ path, change: 'read' }] };
  },
});
