/** `search_files {directory}`: the seed's command that lists the files under a workspace folder. */
import { z } from 'zod';
import { defineCommand } from './command.js';
import { LIST_LIMIT } from './workspace.js';
import { workspacePath } from './workspace-path.js';

export const searchFiles = defineCommand({
  name: 'search_files',
  title: 'Search Files',
  description: `Lists the files under a folder of the workspace ("." for all of it), recursively. Returns their paths relative to the workspace, one a line, at most ${LIST_LIMIT}.`,
  args: z.object({
    directory: z.string().describe('directory'),
  }),
  effect: 'read',
  needs: ['workspace'],
  async run({ directory }, { workspace }) {
    const files = await workspace.list(directory);
    const path = workspacePath(directory, { root: true });
    const where = path === '.' ? 'the workspace' : path;
    return {
      output: files.length === 0 ? `There are no files in ${where}.` : files.join('\n'),
      files: [{ path, change: 'list' }],
    };
  },
});
