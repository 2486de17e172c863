/** `delete_file {file}`: the seed's command that deletes one workspace file. */
import { z } from 'zod';
import { defineCommand } from './command.js';
import { workspacePath } from './workspace-path.js';

export const deleteFile = defineCommand({
  name: 'delete_file',
  title: 'Delete file',
  description:
    'Deletes a file in the workspace (path relative to it); folders are refused. Returns which file was deleted.',
  args: z.object({
    file: z.string().describe('file'),
  }),
  effect: 'delete',
  needs: ['workspace'],
  async run({ file }, { workspace }) {
    await workspace.remove(file);
    const path = workspacePath(file);
    return { output: `Deleted ${path}.`, files: [{ path, change: 'delete' }] };
  },
});
