import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { classify } from '../../src/llm/classify.js';
import { createScriptedModels, hashEmbedding, loadScript } from '../../src/llm/scripted.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'meta-agent-script-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function scriptFile(content: unknown, name = 'script.json'): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

const ask = (text: string) => ({ messages: [{ role: 'user' as const, content: text }] });

describe('scripted provider', () => {
  it('answers with the first rule whose substring or regex matches the whole prompt', async () => {
    const path = await scriptFile({
      rules: [
        { match: '/weath(er)?/i', reply: 'Sunny.' },
        { match: 'weather', reply: 'never reached' },
        { reply: 'catch-all' },
      ],
    });
    const { chatbot } = await createScriptedModels(path);
    expect((await chatbot.complete(ask('How is the WEATHER?'))).text).toBe('Sunny.');
    expect((await chatbot.complete(ask('Anything else?'))).text).toBe('catch-all');
  });

  it('matches against all messages joined, not only the last one', async () => {
    const path = await scriptFile({
      rules: [{ match: 'you are a pirate', reply: 'Arr.' }],
      default: 'plain',
    });
    const { chatbot } = await createScriptedModels(path);
    const answer = await chatbot.complete({
      messages: [
        { role: 'system', content: 'you are a pirate' },
        { role: 'user', content: 'hello' },
      ],
    });
    expect(answer.text).toBe('Arr.');
  });

  it('answers an array reply in order, then repeats its last item', async () => {
    const path = await scriptFile({ rules: [{ reply: ['first', 'second'] }] });
    const { chatbot } = await createScriptedModels(path);
    const texts = [];
    for (let i = 0; i < 4; i++) texts.push((await chatbot.complete(ask('hi'))).text);
    expect(texts).toEqual(['first', 'second', 'second', 'second']);
  });

  it('applies a rule with a role only to that role', async () => {
    const path = await scriptFile({
      rules: [
        { role: 'classifier', reply: 'B' },
        { role: 'userbot', reply: 'I am the user.' },
      ],
      default: 'chatbot speaking',
    });
    const models = await createScriptedModels(path);
    expect((await models.chatbot.complete(ask('x'))).text).toBe('chatbot speaking');
    expect((await models.userbot.complete(ask('x'))).text).toBe('I am the user.');
    const choice = await classify(models.classifier, { prompt: 'Pick', choices: ['red', 'blue'] });
    expect(choice).toMatchObject({ index: 1, label: 'B', attempts: 1 });
  });

  it('marks itself scripted and names the script in its id', async () => {
    const path = await scriptFile({ rules: [], default: 'ok' });
    const { chatbot } = await createScriptedModels(path);
    expect(chatbot.answersFrom).toBe('rules');
    expect(chatbot.id).toBe(`scripted:${path}`);
  });

  it('streams the reply in pieces that add up to the whole text', async () => {
    const path = await scriptFile({ rules: [{ reply: 'one two three' }] });
    const { chatbot } = await createScriptedModels(path);
    const deltas: string[] = [];
    const result = await chatbot.stream(ask('go'), (chunk) => deltas.push(chunk.delta));
    expect(deltas.length).toBe(3);
    expect(deltas.join('')).toBe('one two three');
    expect(result.text).toBe('one two three');
    expect(result.usage.completionTokens).toBeGreaterThan(0);
  });

  it('without a matching rule or default, fails quoting the prompt start and the script file', async () => {
    const path = await scriptFile({ rules: [{ match: 'nothing like this', reply: 'x' }] }, 'strict.json');
    const { chatbot } = await createScriptedModels(path);
    const failure = chatbot.complete(ask('Tell me about the ocean'));
    await expect(failure).rejects.toBeInstanceOf(UserError);
    await expect(failure).rejects.toThrow(/strict\.json.*Tell me about the ocean/);
  });

  it('embeds deterministically, closer for texts that share words', async () => {
    const path = await scriptFile({ rules: [] });
    const { embedder } = await createScriptedModels(path);
    const { vectors } = await embedder.embed(['red apples', 'red apples', 'green apples', 'quantum physics']);
    const [a, b, c, d] = vectors as [number[], number[], number[], number[]];
    expect(a).toEqual(b);
    const dot = (x: number[], y: number[]) => x.reduce((sum, v, i) => sum + v * (y[i] ?? 0), 0);
    expect(dot(a, c)).toBeGreaterThan(dot(a, d));
    expect(hashEmbedding('red apples')).toEqual(a);
  });

  it('rejects a script file that is missing, not JSON, or the wrong shape, naming the path', async () => {
    await expect(loadScript(join(dir, 'absent.json'))).rejects.toThrow(/absent\.json: no such file/);
    const notJson = await scriptFile('{ rules: ', 'broken.json');
    await expect(loadScript(notJson)).rejects.toThrow(/broken\.json is not valid JSON/);
    const wrongShape = await scriptFile({ rules: [{ match: 'x' }] }, 'shape.json');
    await expect(loadScript(wrongShape)).rejects.toThrow(/shape\.json is invalid at rules\.0\.reply/);
    const badRole = await scriptFile({ rules: [{ role: 'narrator', reply: 'x' }] }, 'role.json');
    await expect(loadScript(badRole)).rejects.toThrow(/role\.json is invalid at rules\.0\.role/);
    const badRegex = await scriptFile({ rules: [{ match: '/(unclosed/', reply: 'x' }] }, 'regex.json');
    await expect(loadScript(badRegex)).rejects.toThrow(/regex\.json has an invalid regular expression/);
  });
});
