/** `call_autogram`: calls a function node of a graph file, as `meta-agent call` does. */
import { z } from 'zod';
import { defineCommand } from './command.js';
import { capped } from './sub-agents.js';

export const callAutogram = defineCommand({
  name: 'call_autogram',
  title: 'Call autogram function',
  description:
    'Calls a callable node (a function node named like f(a, b)) of a graph file in the workspace with the given arguments, in a fresh run with no conversation, and returns the value it returns as JSON. Refused when the graph has no such function (the error names the callable nodes).',
  args: z.object({
    graph: z.string().describe('path of the graph file in the workspace'),
    function: z.string().describe('the function name, e.g. double'),
    args: z.array(z.unknown()).default([]).describe('the arguments, as a JSON array'),
  }),
  effect: 'agent',
  needs: ['agents'],
  async run({ graph, function: fn, args }, { agents, signal }) {
    const value = await agents.call(graph, fn, args, signal);
    if (value === undefined) return `${fn} returned nothing.`;
    return capped(`${fn} returned: ${JSON.stringify(value)}`, 'value');
  },
});
