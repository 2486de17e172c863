import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { UserError } from '../../src/errors.js';
import { OpenAIModel } from '../../src/llm/openai.js';
import { Script, ScriptedModel } from '../../src/llm/scripted.js';
import { generateObject, isStrictCompatible, parseObject, schemaFor } from '../../src/llm/structured.js';
import { startOpenAIServer } from '../support/openai-server.js';
import type { OpenAIServer, OpenAIServerOptions } from '../support/openai-server.js';

let server: OpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function modelAgainst(options: OpenAIServerOptions): Promise<OpenAIModel> {
  server = await startOpenAIServer(options);
  return new OpenAIModel({ baseUrl: server.url, model: 'gpt-4o-mini', maxRetries: 0 });
}

const plan = z.object({ title: z.string(), steps: z.array(z.string()) });
const ask = [{ role: 'user' as const, content: 'Plan a picnic.' }];
const good = JSON.stringify({ title: 'Picnic', steps: ['pack', 'go'] });

describe('generateObject', () => {
  it('asks with a strict json_schema response format and returns the typed object', async () => {
    const model = await modelAgainst({ answers: [good] });
    const result = await generateObject(model, plan, ask, { name: 'plan', purpose: 'test: plan' });
    expect(result).toMatchObject({
      object: { title: 'Picnic', steps: ['pack', 'go'] },
      attempts: 1,
      format: 'json_schema',
    });
    const [request] = server!.chatRequests();
    expect(request?.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'plan', schema: schemaFor(plan), strict: true },
    });
    expect(request?.messages).toHaveLength(1);
    expect(request?.messages[0]?.content).toContain('Plan a picnic.');
    expect(request?.messages[0]?.content).toContain('"steps"');
  });

  it('falls back to json_object when the server rejects json_schema, and remembers it', async () => {
    const model = await modelAgainst({ rejectResponseFormats: ['json_schema'], answers: [good, good] });
    const first = await generateObject(model, plan, ask);
    expect(first.format).toBe('json_object');
    expect(first.attempts).toBe(1);
    await generateObject(model, plan, ask);
    const formats = server!.chatRequests().map((request) => request.response_format?.type);
    expect(formats).toEqual(['json_schema', 'json_object', 'json_object']);
  });

  it('falls back to plain text when the server rejects both JSON modes', async () => {
    const model = await modelAgainst({
      rejectResponseFormats: ['json_schema', 'json_object'],
      answers: [good],
    });
    const result = await generateObject(model, plan, ask);
    expect(result.format).toBe('text');
    expect(server!.chatRequests().at(-1)).not.toHaveProperty('response_format');
  });

  it('asks a model without structured output in plain text from the start, the schema in the prompt', async () => {
    const scripted = new ScriptedModel(
      new Script({ rules: [{ match: '"steps"', reply: good }] }, 'plan'),
      'chatbot',
    );
    const result = await generateObject(scripted, plan, ask);
    expect(result).toMatchObject({ object: { title: 'Picnic' }, attempts: 1, format: 'text' });
  });

  it('re-asks with the validation error after an invalid answer', async () => {
    const model = await modelAgainst({ answers: ['{"title": "Picnic", "steps": "pack"}', good] });
    const result = await generateObject(model, plan, ask);
    expect(result.attempts).toBe(2);
    const retry = server!.chatRequests()[1];
    expect(retry?.messages.at(-2)).toEqual({
      role: 'assistant',
      content: '{"title": "Picnic", "steps": "pack"}',
    });
    expect(retry?.messages.at(-1)?.content).toContain(
      'steps: Invalid input: expected array, received string',
    );
  });

  it('reads JSON wrapped in a code fence and prose', async () => {
    const model = await modelAgainst({ answers: [`Here you go:\n\`\`\`json\n${good}\n\`\`\`\nEnjoy!`] });
    expect((await generateObject(model, plan, ask)).object.title).toBe('Picnic');
  });

  it('stops after the allowed tries with one line naming the purpose and the problem', async () => {
    const model = await modelAgainst({ defaultAnswer: 'I cannot do JSON.' });
    const failure = generateObject(model, plan, ask, { tries: 2, purpose: 'design: outline' });
    await expect(failure).rejects.toBeInstanceOf(UserError);
    await expect(failure).rejects.toThrow(
      /^the structured answer for design: outline: no usable answer after 2 tries; the last was "I cannot do JSON\." \(the answer is not valid JSON/,
    );
    expect(server!.chatRequests()).toHaveLength(2);
  });
});

describe('structured helpers', () => {
  it('sends schemas with optional fields non-strict', () => {
    expect(isStrictCompatible(schemaFor(plan))).toBe(true);
    expect(isStrictCompatible(schemaFor(z.object({ a: z.string().optional() })))).toBe(false);
    expect(
      isStrictCompatible(schemaFor(z.object({ list: z.array(z.object({ b: z.number().optional() })) }))),
    ).toBe(false);
  });

  it('explains every schema problem on one line', () => {
    const parsed = parseObject('{"title": 1}', plan);
    expect(parsed).toEqual({
      ok: false,
      error:
        'the JSON does not match the schema: title: Invalid input: expected string, received number; steps: Invalid input: expected array, received undefined',
    });
  });
});
