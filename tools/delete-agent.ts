/** `delete_agent`: ends a sub-agent and forgets its conversation. */
import { z } from 'zod';
import { defineCommand } from './command.js';

export const deleteAgent = defineCommand({
  name: 'delete_agent',
  title: 'Delete agent',
  description:
    'Ends a sub-agent started with start_agent and forgets its conversation; its graph file stays in the workspace. Refused for an unknown key.',
  args: z.object({
    key: z.string().describe('the agent key, e.g. agent-1'),
  }),
  effect: 'agent',
  needs: ['agents'],
  async run({ key }, { agents }) {
    if (agents.remove(key)) return `Deleted ${key}.`;
    const keys = agents.list().map((agent) => agent.key);
    throw new Error(
      `no sub-agent "${key}"; ${keys.length > 0 ? `the sub-agents are ${keys.join(', ')}` : 'none is running'}`,
    );
  },
});
