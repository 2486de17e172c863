import { afterEach, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { classify, formatChoiceQuestion, parseChoice } from '../../src/llm/classify.js';
import { OpenAIModel } from '../../src/llm/openai.js';
import { labelLogitBias } from '../../src/llm/tokens.js';
import { startOpenAIServer } from '../support/openai-server.js';
import type { OpenAIServer, OpenAIServerOptions } from '../support/openai-server.js';

let server: OpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function modelAgainst(options: OpenAIServerOptions, model = 'gpt-4o-mini'): Promise<OpenAIModel> {
  server = await startOpenAIServer(options);
  return new OpenAIModel({ baseUrl: server.url, model, maxRetries: 0 });
}

const colours = ['seven', 'blue', 'Tuesday'];

describe('classify', () => {
  it('sends one token at temperature 0 with logit_bias on the answer letters', async () => {
    const model = await modelAgainst({ answers: ['B'] });
    const result = await classify(model, { prompt: 'Which is a colour?', choices: colours, purpose: 'test' });
    expect(result).toMatchObject({ index: 1, label: 'B', raw: 'B', attempts: 1 });
    const [request] = server!.chatRequests();
    expect(request?.max_tokens).toBe(1);
    expect(request?.temperature).toBe(0);
    expect(request?.logit_bias).toEqual(
      labelLogitBias(
        'gpt-4o-mini',
        ['A', 'B', 'C'].map((text) => ({ text, bias: 100 })),
      ),
    );
    expect(Object.keys(request?.logit_bias ?? {})).toHaveLength(6);
    expect(request?.messages.at(-1)?.content).toBe(formatChoiceQuestion('Which is a colour?', colours));
  });

  it('lets a server that honours logit_bias pick the letter from a chatty answer', async () => {
    const model = await modelAgainst({ answers: ['I would say C, Tuesday'] });
    const result = await classify(model, { prompt: 'Which is a day?', choices: colours });
    expect(result).toMatchObject({ index: 2, label: 'C', attempts: 1 });
  });

  it('parses "The answer is B" from a server that ignores logit_bias', async () => {
    const model = await modelAgainst({ ignoreLogitBias: true, answers: ['The answer is B'] });
    const result = await classify(model, { prompt: 'Which is a colour?', choices: colours });
    expect(result).toMatchObject({ index: 1, label: 'B', raw: 'The answer is B', attempts: 1 });
  });

  it('re-asks with a reminder after garbage and accepts the corrected answer', async () => {
    const model = await modelAgainst({ ignoreLogitBias: true, answers: ['Hmm, hard to say.', 'b.'] });
    const result = await classify(model, { prompt: 'Which is a colour?', choices: colours });
    expect(result).toMatchObject({ index: 1, attempts: 2 });
    const retry = server!.chatRequests()[1];
    expect(retry?.messages.at(-2)).toEqual({ role: 'assistant', content: 'Hmm, hard to say.' });
    expect(retry?.messages.at(-1)?.content).toBe('Answer with one letter only: A, B, C.');
    expect(result.usage.promptTokens).toBeGreaterThan(0);
  });

  it('gives up after a bounded number of garbage answers with an error naming the question', async () => {
    const model = await modelAgainst({ ignoreLogitBias: true, defaultAnswer: 'Well, it depends.' });
    const failure = classify(model, { prompt: 'Which is a colour?', choices: colours });
    await expect(failure).rejects.toBeInstanceOf(UserError);
    await expect(failure).rejects.toThrow(
      'classifier question "Which is a colour?": no usable answer after 3 tries; the last was "Well, it depends." (expected one of A, B, C)',
    );
    expect(server!.chatRequests()).toHaveLength(3);
  });

  it('asks yes/no questions with Yes and No biased and maps Yes to the first choice', async () => {
    const model = await modelAgainst({ answers: ['No'] });
    const result = await classify(model, {
      prompt: 'Did the user agree?',
      choices: ['agreed', 'refused'],
      kind: 'yesno',
    });
    expect(result).toMatchObject({ index: 1, label: 'No' });
    const [request] = server!.chatRequests();
    expect(request?.messages.at(-1)?.content).toBe('Did the user agree?\nAnswer Yes or No only.');
    expect(request?.logit_bias).toEqual(
      labelLogitBias(
        'gpt-4o-mini',
        ['Yes', 'No'].map((text) => ({ text, bias: 100 })),
      ),
    );
  });

  it('sends no logit_bias to a model whose tokenizer is unknown', async () => {
    const model = await modelAgainst(
      { ignoreLogitBias: true, answers: ['A'], models: ['llama3.2'] },
      'llama3.2',
    );
    await classify(model, { prompt: 'Which is a number?', choices: colours });
    expect(server!.chatRequests()[0]).not.toHaveProperty('logit_bias');
  });

  it('puts context messages before the formatted question', async () => {
    const model = await modelAgainst({ answers: ['A'] });
    await classify(model, {
      context: [{ role: 'user', content: 'I love it!' }],
      prompt: 'Is the user happy?',
      choices: ['happy', 'sad'],
    });
    const messages = server!.chatRequests()[0]?.messages;
    expect(messages?.[0]).toEqual({ role: 'user', content: 'I love it!' });
    expect(messages).toHaveLength(2);
  });

  it('refuses a yes/no question without exactly two choices', async () => {
    const model = await modelAgainst({});
    await expect(
      classify(model, { prompt: 'Done?', choices: ['a', 'b', 'c'], kind: 'yesno' }),
    ).rejects.toThrow('the yes/no question "Done?" needs exactly 2 choices, not 3');
  });
});

describe('parseChoice', () => {
  const letters = (text: string) => parseChoice(text, 'letters', colours);
  it.each([
    ['B', 1],
    [' b', 1],
    ['B.', 1],
    ['(c)', 2],
    ['A) seven', 0],
    ['The answer is B', 1],
    ['answer: c', 2],
    ['Tuesday', 2],
    ['I think B', 1],
  ])('reads %j as choice %i', (text, index) => {
    expect(letters(text)).toEqual({ ok: true, value: index });
  });

  it.each(['', 'D', 'no idea', 'A or B'])('rejects %j', (text) => {
    expect(letters(text).ok).toBe(false);
  });

  it.each([
    ['Yes', 0],
    ['yes.', 0],
    [' no', 1],
    ['N', 1],
    ['I would say yes', 0],
  ])('reads yes/no answer %j as %i', (text, index) => {
    expect(parseChoice(text, 'yesno', ['agreed', 'refused'])).toEqual({ ok: true, value: index });
  });
});
