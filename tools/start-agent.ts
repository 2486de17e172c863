/** `start_agent`: starts a sub-agent, an autogram from a graph file or designed for the task. */
import { z } from 'zod';
import { defineCommand } from './command.js';

export const startAgent = defineCommand({
  name: 'start_agent',
  title: 'Start agent',
  description:
    'Starts a sub-agent: an autogram (agent graph) run as a conversation partner. When task (or name) is the path of a graph file in the workspace (.autogram.json, .json or .csv), that graph runs; otherwise a new agent is designed for the task and saved in the workspace as <name>.autogram.json (slow and costly: start the saved file next time). Returns the agent key for message_agent and what the agent said to prompt (its opening line too, if it spoke first).',
  args: z.object({
    name: z.string().describe('short name for the agent'),
    task: z.string().describe('what the agent is for, or the path of a graph file in the workspace'),
    prompt: z.string().describe('the first message to the agent'),
  }),
  effect: 'agent',
  needs: ['agents'],
  async run({ name, task, prompt }, { agents, signal }) {
    const { key, reply } = await agents.start(name, task, prompt, signal);
    const graph = agents.list().find((agent) => agent.key === key)?.graph;
    return `Started ${key} ("${name}") running ${graph}. It said:\n${reply}`;
  },
});
