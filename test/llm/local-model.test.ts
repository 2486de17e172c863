/**
 * The embedded model through the real runtime (node-llama-cpp) on a tiny GGUF the tests write
 * themselves. ITS WEIGHTS ARE RANDOM: these tests check the path (loading, the tokenizer, the token
 * bias, the grammar, streaming, cancellation), never whether an answer is right.
 */
import { availableParallelism } from 'node:os';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { UserError } from '../../src/errors.js';
import { classify } from '../../src/llm/classify.js';
import { LocalModel } from '../../src/llm/local/local-model.js';
import { parseModelRef } from '../../src/llm/local/model-ref.js';
import { generateObject } from '../../src/llm/structured.js';
import { ensureTestRuntime, localTestEnv, tinyModelFile } from '../support/local-runtime.js';

let path: string;
let model: LocalModel;

beforeAll(async () => {
  await ensureTestRuntime();
  path = tinyModelFile();
  model = new LocalModel({ ref: { kind: 'file', path }, env: localTestEnv() });
}, 120_000);

describe('the embedded model (random weights: the path, not the answers)', () => {
  it('loads the GGUF through the prebuilt runtime on the CPU', async () => {
    const info = await model.info();
    expect(info).toMatchObject({ path, gpu: 'cpu', gpuLayers: 0, threads: 1, contextSize: 2048 });
    expect(info.runtime).toMatch(/^node-llama-cpp 3\.\d+\.\d+ \(prebuilt\)$/);
    expect(model.id).toBe(`local:${path}`);
    expect(model.modelName).toBe('tiny');
  });

  it('runs, unless told, no more threads than the CPUs this process may use', async () => {
    const { META_AGENT_LOCAL_THREADS: _one, ...env } = localTestEnv();
    const fallback = new LocalModel({ ref: { kind: 'file', path }, env });
    const { threads } = await fallback.info();
    expect(threads).toBeGreaterThanOrEqual(1);
    expect(threads).toBeLessThanOrEqual(availableParallelism());
  });

  it('counts the tokens it read and wrote in its own tokenizer', async () => {
    const completion = await model.complete({ messages: [{ role: 'user', content: 'hello' }], maxTokens: 5 });
    expect(completion.usage.completionTokens).toBeGreaterThan(0);
    expect(completion.usage.completionTokens).toBeLessThanOrEqual(5);
    expect(completion.usage.promptTokens).toBeGreaterThan(0);
  });

  it('answers a classifier question with exactly one label token, on the first try', async () => {
    for (const choices of [
      ['red', 'blue', 'green'],
      ['a', 'b', 'c', 'd', 'e', 'f'],
    ]) {
      const answer = await classify(model, { prompt: 'Which one?', choices });
      expect(answer.attempts).toBe(1);
      expect(answer.raw).toMatch(/^ ?[A-F]$/);
      expect(answer.raw.trim()).toBe(answer.label);
    }
    const yesNo = await classify(model, { prompt: 'Is it?', choices: ['yes', 'no'], kind: 'yesno' });
    expect(yesNo.attempts).toBe(1);
    expect(['Yes', 'No']).toContain(yesNo.raw.trim());
  });

  it('weighs the labels by their bias, penalties included', async () => {
    const penalised = (penalties: number[]) =>
      classify(model, { prompt: 'Which one?', choices: ['red', 'blue', 'green'], penalties });
    expect((await penalised([200, 200, 0])).label).toBe('C');
    expect((await penalised([0, 200, 200])).label).toBe('A');
  });

  it('writes JSON that matches the schema under a grammar, the first time', async () => {
    const schema = z.object({
      colour: z.enum(['red', 'blue']),
      bright: z.boolean(),
      tags: z.array(z.enum(['hello', 'null'])).max(3),
    });
    const result = await generateObject(model, schema, [{ role: 'user', content: 'Describe it.' }], {
      purpose: 'test',
    });
    expect(result.attempts).toBe(1);
    expect(result.format).toBe('json_schema');
    expect(schema.parse(JSON.parse(result.text))).toEqual(result.object);
  });

  it('streams its answer in pieces that add up to the whole', async () => {
    const pieces: string[] = [];
    const completion = await model.stream(
      { messages: [{ role: 'user', content: 'hello' }], maxTokens: 12 },
      (chunk) => pieces.push(chunk.delta),
    );
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join('')).toBe(completion.text);
  });

  it('stops when the caller cancels, and answers the next call', async () => {
    const controller = new AbortController();
    let pieces = 0;
    const cancelled = model.stream(
      { messages: [{ role: 'user', content: 'hello' }], maxTokens: 1000, signal: controller.signal },
      () => {
        pieces += 1;
        if (pieces === 3) controller.abort(new Error('cancelled by the test'));
      },
    );
    await expect(cancelled).rejects.toThrow('cancelled by the test');
    expect(pieces).toBeLessThan(10);
    const next = await model.complete({ messages: [{ role: 'user', content: 'again' }], maxTokens: 3 });
    expect(next.usage.completionTokens).toBeGreaterThan(0);
  });

  it('takes calls made at once in turn', async () => {
    const answers = await Promise.all(
      [1, 2, 3].map(() => classify(model, { prompt: 'Which one?', choices: ['x', 'y'] })),
    );
    expect(answers.map((answer) => answer.attempts)).toEqual([1, 1, 1]);
  });

  it('embeds texts as vectors of the model’s width', async () => {
    const { vectors, usage } = await model.embed(['hello', 'red blue']);
    expect(vectors).toHaveLength(2);
    expect(vectors[0]).toHaveLength(32);
    expect(usage.promptTokens).toBeGreaterThan(0);
  });
});

describe('the embedded model, not ready', () => {
  it('says how to download a model that is not in the cache', async () => {
    const missing = new LocalModel({
      ref: parseModelRef('hf:someone/some-model-GGUF/model.gguf'),
      env: localTestEnv(),
    });
    const failure = missing.complete({ messages: [{ role: 'user', content: 'hi' }] });
    await expect(failure).rejects.toThrow(UserError);
    await expect(failure).rejects.toThrow(
      'the model hf:someone/some-model-GGUF/model.gguf is not downloaded yet',
    );
  });

  it('says how to install a runtime that is missing', async () => {
    const env = localTestEnv();
    const bare = new LocalModel({
      ref: { kind: 'file', path },
      env: { ...env, META_AGENT_RUNTIME_DIR: env.META_AGENT_CACHE_DIR! },
    });
    await expect(bare.info()).rejects.toThrow(/runtime \(node-llama-cpp 3\.\d+\.\d+\) is not installed/);
  });

  it('refuses a file that is not a model, in one line', async () => {
    const broken = new LocalModel({ ref: { kind: 'file', path: `${path}.missing` }, env: localTestEnv() });
    await expect(broken.info()).rejects.toThrow(UserError);
  });
});
