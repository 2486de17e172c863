/**
 * `clone_repository` as AutoGPT names it: a public git repository (http or https) cloned into a new
 * folder of the workspace, under the run's network policy (the `git` resource, git-clone.ts).
 */
import { z } from 'zod';
import { defineCommand } from './command.js';
import { describeBytes } from './workspace.js';

export const cloneRepository = defineCommand({
  name: 'clone_repository',
  title: 'Clone Repository',
  description:
    'Clones a public git repository (an http or https URL) into a new folder of the workspace, ' +
    'without its submodules; symlinks in it become plain files. Returns where it is and its size.',
  args: z.object({
    repository_url: z.string().describe('url'),
    clone_path: z.string().describe('directory'),
  }),
  effect: 'write',
  needs: ['git'],
  async run({ repository_url, clone_path }, { git, signal }) {
    const cloned = await git.clone(repository_url, clone_path, signal);
    return {
      output: `Cloned ${repository_url} into ${cloned.path} (${describeBytes(cloned.bytes)}).`,
      files: [{ path: cloned.path, change: 'write' }],
    };
  },
});
