import { afterEach, describe, expect, it } from 'vitest';
import { ModelError, toolsUnsupported } from '../../src/llm/errors.js';
import { OpenAIModel } from '../../src/llm/openai.js';
import type { OpenAIModelOptions } from '../../src/llm/openai.js';
import { countMessageTokens, countTokens } from '../../src/llm/tokens.js';
import type { CompletionRequest, ToolSpec } from '../../src/llm/types.js';
import { UsageMeter } from '../../src/llm/usage.js';
import { modelFailure } from '../support/model-failure.js';
import { noToolsMessage, startOpenAIServer } from '../support/openai-server.js';
import type { OpenAIServer, OpenAIServerOptions } from '../support/openai-server.js';

let server: OpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function modelAgainst(
  options: OpenAIServerOptions,
  model: Partial<OpenAIModelOptions> = {},
): Promise<OpenAIModel> {
  server = await startOpenAIServer(options);
  return new OpenAIModel({ baseUrl: server.url, model: 'gpt-4o-mini', maxRetries: 0, ...model });
}

const readFile: ToolSpec = {
  name: 'read_file',
  description: 'Read a file of the workspace',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};
const finish: ToolSpec = {
  name: 'finish',
  description: 'Say the goal is reached',
  parameters: { type: 'object', properties: { summary: { type: 'string' } } },
};
const withTools: CompletionRequest = {
  messages: [{ role: 'user', content: 'What does notes.md say?' }],
  tools: [readFile, finish],
};
const readNotes = { name: 'read_file', arguments: '{"path": "notes.md"}', id: 'call_abc' };

/** The deltas a stream handed out, and its completion. */
async function streamed(model: OpenAIModel, request: CompletionRequest) {
  const deltas: string[] = [];
  const completion = await model.stream(request, (chunk) => deltas.push(chunk.delta));
  return { deltas, completion };
}

describe('tools offered to an OpenAI-compatible server', () => {
  it('sends the tools as OpenAI functions, and no tool_choice', async () => {
    const model = await modelAgainst({});
    await model.complete(withTools);
    const [request] = server!.chatRequests();
    expect(request?.tools).toEqual([
      { type: 'function', function: readFile },
      { type: 'function', function: finish },
    ]);
    expect(request).not.toHaveProperty('tool_choice');
  });

  it('sends no tools key when none are offered, or the list is empty', async () => {
    const model = await modelAgainst({});
    await model.complete({ messages: withTools.messages });
    await model.stream({ messages: withTools.messages, tools: [] }, () => undefined);
    for (const request of server!.chatRequests()) expect(request).not.toHaveProperty('tools');
  });

  it('still answers in text when the model calls no tool', async () => {
    const model = await modelAgainst({ answers: ['It says hello.', 'It says hello.'] });
    const whole = await model.complete(withTools);
    const { deltas, completion } = await streamed(model, withTools);
    expect(whole.text).toBe('It says hello.');
    expect(completion.text).toBe('It says hello.');
    expect(deltas.join('')).toBe('It says hello.');
    expect(whole).not.toHaveProperty('toolCalls');
    expect(completion).not.toHaveProperty('toolCalls');
  });
});

describe('tool calls in a whole answer', () => {
  it('returns the call with its id, name and arguments as sent, and empty text for null content', async () => {
    const model = await modelAgainst({ answers: [{ toolCalls: [readNotes] }] });
    const completion = await model.complete(withTools);
    expect(completion.text).toBe('');
    expect(completion.toolCalls).toEqual([readNotes]);
  });

  it('returns several calls in order, with the text said before them', async () => {
    const model = await modelAgainst({
      answers: [
        {
          text: 'Let me look.',
          toolCalls: [
            { name: 'read_file', arguments: { path: 'a.md' } },
            { name: 'read_file', arguments: { path: 'b.md' } },
          ],
        },
      ],
    });
    const completion = await model.complete(withTools);
    expect(completion.text).toBe('Let me look.');
    expect(completion.toolCalls?.map((call) => JSON.parse(call.arguments) as unknown)).toEqual([
      { path: 'a.md' },
      { path: 'b.md' },
    ]);
    const ids = completion.toolCalls?.map((call) => call.id);
    expect(new Set(ids).size).toBe(2);
  });

  it('leaves out calls of other kinds than function', async () => {
    const model = await modelAgainst({
      answers: [
        {
          fault: 'malformed-tool-calls',
          toolCalls: [
            { id: 'call_1', type: 'custom', custom: { name: 'grammar', input: 'x' } },
            { id: 'call_2', type: 'function', function: { name: 'finish', arguments: '{}' } },
          ],
        },
      ],
    });
    const completion = await model.complete(withTools);
    expect(completion.toolCalls).toEqual([{ id: 'call_2', name: 'finish', arguments: '{}' }]);
  });

  it('writes object arguments (older Ollama) as JSON text, and gives id-less calls an id', async () => {
    const model = await modelAgainst({
      answers: [
        {
          fault: 'malformed-tool-calls',
          toolCalls: [{ function: { name: 'read_file', arguments: { path: 'notes.md' } } }],
        },
      ],
    });
    const completion = await model.complete(withTools);
    expect(completion.toolCalls).toEqual([
      { id: 'call_0', name: 'read_file', arguments: '{"path":"notes.md"}' },
    ]);
  });
});

describe('tool calls in a stream', () => {
  it('assembles a call from its pieces: id and name first, arguments concatenated', async () => {
    const args = '{"path": "a rather long/path/to/notes.md", "lines": [1, 2, 3]}';
    const model = await modelAgainst({ answers: [{ toolCalls: [{ ...readNotes, arguments: args }] }] });
    const { deltas, completion } = await streamed(model, withTools);
    expect(completion.toolCalls).toEqual([{ id: 'call_abc', name: 'read_file', arguments: args }]);
    expect(completion.text).toBe('');
    expect(deltas).toEqual([]);
  });

  it('gets the arguments in several pieces from the test server, as from OpenAI', async () => {
    server = await startOpenAIServer({ answers: [{ toolCalls: [readNotes] }] });
    const response = await fetch(`${server.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: withTools.messages, stream: true }),
    });
    const pieces = (await response.text())
      .split('\n\n')
      .filter((event) => event.startsWith('data: {'))
      .map((event) => JSON.parse(event.slice(6)) as { choices: Array<{ delta: Record<string, unknown> }> })
      .flatMap((chunk) => (chunk.choices[0]?.delta.tool_calls as object[] | undefined) ?? []);
    expect(pieces[0]).toEqual({
      index: 0,
      id: 'call_abc',
      type: 'function',
      function: { name: 'read_file', arguments: '' },
    });
    expect(pieces.length).toBeGreaterThanOrEqual(3);
  });

  it('streams the text said first, then returns every call in order', async () => {
    const model = await modelAgainst({
      answers: [
        {
          text: 'Reading both.',
          toolCalls: [
            { name: 'read_file', arguments: { path: 'a.md' }, id: 'call_a' },
            { name: 'finish', arguments: { summary: 'done' }, id: 'call_b' },
          ],
        },
      ],
    });
    const { deltas, completion } = await streamed(model, withTools);
    expect(deltas.join('')).toBe('Reading both.');
    expect(completion.text).toBe('Reading both.');
    expect(completion.toolCalls).toEqual([
      { id: 'call_a', name: 'read_file', arguments: '{"path":"a.md"}' },
      { id: 'call_b', name: 'finish', arguments: '{"summary":"done"}' },
    ]);
  });

  it('tells apart calls Ollama streams whole, all at index 0', async () => {
    const model = await modelAgainst({
      answers: [
        {
          streamLike: 'ollama',
          toolCalls: [
            { name: 'read_file', arguments: { path: 'a.md' }, id: 'call_a' },
            { name: 'read_file', arguments: { path: 'b.md' }, id: 'call_b' },
          ],
        },
      ],
    });
    const { completion } = await streamed(model, withTools);
    expect(completion.toolCalls).toEqual([
      { id: 'call_a', name: 'read_file', arguments: '{"path":"a.md"}' },
      { id: 'call_b', name: 'read_file', arguments: '{"path":"b.md"}' },
    ]);
  });

  it('keeps pieces without a name in their call, whatever id they carry', async () => {
    const model = await modelAgainst({
      answers: [
        {
          fault: 'malformed-tool-calls',
          toolCalls: [
            { index: 0, id: 'call_1', function: { name: 'finish', arguments: '{"sum' } },
            { index: 0, id: 'call_2', function: { arguments: 'mary": "ok"}' } },
          ],
        },
      ],
    });
    const { completion } = await streamed(model, withTools);
    expect(completion.toolCalls).toEqual([{ id: 'call_1', name: 'finish', arguments: '{"summary": "ok"}' }]);
  });
});

describe('token counts for tool calls', () => {
  it('reports the usage the server sent', async () => {
    const model = await modelAgainst({
      answers: [{ toolCalls: [readNotes], usage: { promptTokens: 80, completionTokens: 12 } }],
    });
    expect((await model.complete(withTools)).usage).toEqual({ promptTokens: 80, completionTokens: 12 });
  });

  it('counts the offered tools in and the calls out when the server reports no usage', async () => {
    const model = await modelAgainst({ sendUsage: false, answers: [{ toolCalls: [readNotes] }] });
    const expected = {
      promptTokens:
        countMessageTokens('gpt-4o-mini', withTools.messages) +
        countTokens('gpt-4o-mini', JSON.stringify(withTools.tools)),
      completionTokens:
        countTokens('gpt-4o-mini', readNotes.name) + countTokens('gpt-4o-mini', readNotes.arguments),
    };
    expect((await model.complete(withTools)).usage).toEqual(expected);
    server!.enqueue({ toolCalls: [readNotes] });
    expect((await streamed(model, withTools)).completion.usage).toEqual(expected);
  });
});

describe('malformed tool calls', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['not a list', 'read_file(notes.md)', /tool_calls is not a list/],
    ['a call without a name', [{ id: 'call_1', function: { arguments: '{}' } }], /no function name/],
    ['a call that is not an object', ['read_file'], /not an object/],
    ['arguments that are a number', [{ id: 'c', function: { name: 'finish', arguments: 7 } }], /arguments/],
  ];

  for (const [what, toolCalls, detail] of cases) {
    it(`reports ${what} as a malformed response, whole and streamed`, async () => {
      const model = await modelAgainst({
        answers: [
          { fault: 'malformed-tool-calls', toolCalls },
          { fault: 'malformed-tool-calls', toolCalls },
        ],
      });
      for (const call of [model.complete(withTools), model.stream(withTools, () => undefined)]) {
        const error = await modelFailure(call);
        expect(error.kind).toBe('malformed');
        expect(error.message).toMatch(detail);
        expect(error.message).toContain(server!.url);
      }
    });
  }
});

describe('servers without native tool calls', () => {
  it('answers a request offering tools with an error that toolsUnsupported recognises', async () => {
    const model = await modelAgainst({ rejectTools: true });
    for (const call of [model.complete(withTools), model.stream(withTools, () => undefined)]) {
      const error = await modelFailure(call);
      expect(error.kind).toBe('bad-request');
      expect(error.status).toBe(400);
      expect(error.serverMessage).toBe(noToolsMessage('gpt-4o-mini'));
      expect(toolsUnsupported(error)).toBe(true);
    }
    // The same server answers once the tools are left out.
    expect((await model.complete({ messages: withTools.messages })).text).toBe('Hello from the test server.');
  });

  it('recognises vLLM without --enable-auto-tool-choice', async () => {
    const model = await modelAgainst({
      rejectTools: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
    });
    expect(toolsUnsupported(await modelFailure(model.complete(withTools)))).toBe(true);
  });

  it('recognises a 422 that refuses the tools field', async () => {
    const model = await modelAgainst({
      answers: [{ fault: 'bad-request', status: 422, message: 'tools: Extra inputs are not permitted' }],
    });
    const error = await modelFailure(model.complete(withTools));
    expect(error).toMatchObject({ kind: 'bad-request', status: 422 });
    expect(toolsUnsupported(error)).toBe(true);
  });

  it('does not take another 400 for a refusal of tools', async () => {
    const model = await modelAgainst({
      answers: [{ fault: 'bad-request', message: "This model's maximum context length is 8192 tokens" }],
    });
    const error = await modelFailure(model.complete(withTools));
    expect(error.status).toBe(400);
    expect(toolsUnsupported(error)).toBe(false);
  });
});

describe('toolsUnsupported', () => {
  const refusal = (status: number | undefined, serverMessage: string) =>
    new ModelError('bad-request', `the model server rejected the request: ${serverMessage}`, 'hint', {
      ...(status !== undefined && { status }),
      serverMessage,
    });

  it.each([
    [400, 'registry.ollama.ai/library/gemma3:270m does not support tools'],
    [400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'],
    [500, 'tools param requires --jinja flag'],
    [500, 'Unsupported param: tool_choice'],
    [404, 'No endpoints found that support tool use'],
    [501, 'Function calling is not supported by this backend'],
    [undefined, 'Cannot use tools with stream'],
  ])('is true for a %s saying %j', (status, message) => {
    expect(toolsUnsupported(refusal(status, message))).toBe(true);
  });

  it.each([
    [400, "This model's maximum context length is 8192 tokens"],
    [400, "Invalid 'tools[0].function.name': string does not match pattern"],
    [400, "Invalid schema for function 'read_file': 'additionalProperties' is required to be false"],
    [400, "messages with role 'tool' must be a response to a preceding message with 'tool_calls'"],
    [429, 'Rate limit reached for requests to tool-capable models; tools require a paid plan'],
    [503, 'tools are not supported while the server is loading'],
  ])('is false for a %s saying %j', (status, message) => {
    expect(toolsUnsupported(refusal(status, message))).toBe(false);
  });

  it('reads only the server message, not ours (which names the model)', () => {
    const error = new ModelError(
      'bad-request',
      'the model server rejected the request for "hermes-tools-unsupported": Bad request',
      'hint',
      { status: 400, serverMessage: 'Bad request' },
    );
    expect(toolsUnsupported(error)).toBe(false);
  });

  it('is false for anything that is not a server-reported ModelError', () => {
    expect(toolsUnsupported(new Error('model does not support tools'))).toBe(false);
    expect(toolsUnsupported(new ModelError('malformed', 'does not support tools'))).toBe(false);
    expect(toolsUnsupported(undefined)).toBe(false);
  });
});

describe('a metered model', () => {
  it('forwards the tools and returns the tool calls, whole and streamed', async () => {
    const model = await modelAgainst({ answers: [{ toolCalls: [readNotes] }, { toolCalls: [readNotes] }] });
    const metered = new UsageMeter().wrap('chatbot', model);
    expect((await metered.complete(withTools)).toolCalls).toEqual([readNotes]);
    expect((await metered.stream(withTools, () => undefined)).toolCalls).toEqual([readNotes]);
    for (const request of server!.chatRequests()) expect(request.tools).toHaveLength(2);
  });
});
