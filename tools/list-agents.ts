/** `list_agents`: the sub-agents of the run. */
import { z } from 'zod';
import { defineCommand } from './command.js';

export const listAgents = defineCommand({
  name: 'list_agents',
  title: 'List agents',
  description:
    'Lists the sub-agents started with start_agent and not deleted: key, name, the graph file each runs, and its task.',
  args: z.object({}),
  effect: 'read',
  needs: ['agents'],
  async run(_args, { agents }) {
    const list = agents.list();
    if (list.length === 0) return 'No sub-agents are running.';
    return list
      .map(({ key, name, graph, task }) => `${key}: "${name}" running ${graph}, task: ${task}`)
      .join('\n');
  },
});
