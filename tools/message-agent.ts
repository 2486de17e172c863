/** `message_agent`: the next turn of a conversation with a sub-agent. */
import { z } from 'zod';
import { defineCommand } from './command.js';

export const messageAgent = defineCommand({
  name: 'message_agent',
  title: 'Message agent',
  description:
    'Sends a message to a sub-agent started with start_agent (an autogram that remembers the conversation) and returns its reply. Refused for an unknown key or an agent whose conversation has ended.',
  args: z.object({
    key: z.string().describe('the agent key start_agent returned, e.g. agent-1'),
    message: z.string().describe('what to say to the agent'),
  }),
  effect: 'agent',
  needs: ['agents'],
  async run({ key, message }, { agents, signal }) {
    return `${key} replied:\n${await agents.message(key, message, signal)}`;
  },
});
