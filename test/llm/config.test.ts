import { afterEach, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { resolveEndpoints, resolveModels } from '../../src/llm/config.js';
import { DEFAULT_LOCAL_MODEL } from '../../src/llm/local/model-ref.js';
import { closedUrl, startOpenAIServer } from '../support/openai-server.js';
import type { OpenAIServer } from '../support/openai-server.js';

let server: OpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const key = { OPENAI_API_KEY: 'sk-test' };

describe('model configuration', () => {
  it('uses OpenAI with its default models when only OPENAI_API_KEY is set', async () => {
    const endpoints = await resolveEndpoints({ env: key });
    expect(endpoints.chatbot).toMatchObject({
      provider: 'openai',
      model: 'gpt-4o-mini',
      baseUrl: 'https://api.openai.com/v1',
      apiKey: 'sk-test',
    });
    expect(endpoints.embedder).toMatchObject({ model: 'text-embedding-3-small' });
  });

  it('ranks per-role flag over --model over per-role env over META_AGENT_MODEL over the graph', async () => {
    const env = { ...key, META_AGENT_MODEL: 'env-global', META_AGENT_USERBOT_MODEL: 'env-userbot' };
    const graph = { chatbot: { model: 'graph-chat' }, classifier: { model: 'graph-classifier' } };
    const onlyGraph = await resolveEndpoints({ env: key, graph });
    expect(onlyGraph.chatbot.model).toBe('graph-chat');
    const envToo = await resolveEndpoints({ env, graph });
    expect([envToo.chatbot.model, envToo.userbot.model]).toEqual(['env-global', 'env-userbot']);
    const flags = await resolveEndpoints({
      env,
      graph,
      flags: { model: 'flag-global', roleModels: { classifier: 'flag-classifier' } },
    });
    expect([flags.chatbot.model, flags.classifier.model, flags.userbot.model]).toEqual([
      'flag-global',
      'flag-classifier',
      'flag-global',
    ]);
    expect(flags.classifier.source).toContain('--classifier-model');
    expect(flags.embedder.model).toBe('text-embedding-3-small');
  });

  it('ranks --base-url over per-role env over OPENAI_BASE_URL over the graph', async () => {
    const env = {
      OPENAI_BASE_URL: 'http://global.test/v1',
      META_AGENT_CLASSIFIER_BASE_URL: 'http://classifier.test/v1/',
      META_AGENT_MODEL: 'm',
      META_AGENT_EMBEDDER_MODEL: 'e',
    };
    const graph = { userbot: { baseUrl: 'http://graph.test/v1' } };
    const fromEnv = await resolveEndpoints({ env, graph });
    expect(fromEnv.chatbot).toMatchObject({ baseUrl: 'http://global.test/v1' });
    expect(fromEnv.classifier).toMatchObject({ baseUrl: 'http://classifier.test/v1' });
    const fromFlag = await resolveEndpoints({ env, graph, flags: { baseUrl: 'http://flag.test/v1' } });
    expect(fromFlag.classifier).toMatchObject({ baseUrl: 'http://flag.test/v1' });
  });

  it('takes a per-role API key over OPENAI_API_KEY', async () => {
    const endpoints = await resolveEndpoints({
      env: { ...key, META_AGENT_CLASSIFIER_API_KEY: 'sk-classifier' },
    });
    expect(endpoints.classifier).toMatchObject({ apiKey: 'sk-classifier' });
    expect(endpoints.chatbot).toMatchObject({ apiKey: 'sk-test' });
  });

  it('asks a configured server for its models when none is named', async () => {
    server = await startOpenAIServer({ models: ['nomic-embed-text', 'llama3.2:latest', 'qwen2.5'] });
    const endpoints = await resolveEndpoints({ env: { OPENAI_BASE_URL: server.url } });
    expect(endpoints.chatbot.model).toBe('llama3.2:latest');
    expect(endpoints.embedder.model).toBe('nomic-embed-text');
    expect(endpoints.chatbot.source).toBe(
      `model from the first model listed by ${server.url}; URL from OPENAI_BASE_URL`,
    );
    expect(server.requests.filter((request) => request.path === '/v1/models')).toHaveLength(1);
  });

  it('finds a local server on a probe URL when nothing is configured', async () => {
    server = await startOpenAIServer({ models: ['llama3.2'] });
    const closed = await closedUrl();
    const { endpoints, models } = await resolveModels({
      env: { META_AGENT_PROBE_URLS: `${closed},${server.url}` },
      flags: { model: 'mistral' },
    });
    expect(endpoints.chatbot).toMatchObject({ baseUrl: server.url, model: 'mistral' });
    expect(endpoints.embedder).toMatchObject({ model: 'mistral' });
    expect(models.chatbot.id).toBe(`openai:mistral@${server.url}`);
  });

  it('fails with exit 2 naming OPENAI_API_KEY, OPENAI_BASE_URL and --base-url when nothing answers and the embedded model is not wanted', async () => {
    const closed = await closedUrl();
    const failure = resolveEndpoints({ env: { META_AGENT_PROBE_URLS: closed }, embeddedFallback: false });
    await expect(failure).rejects.toBeInstanceOf(UserError);
    const error = (await failure.catch((caught: unknown) => caught)) as UserError;
    expect(error.exitCode).toBe(2);
    expect(error.message).toContain('OPENAI_API_KEY');
    expect(error.message).toContain('OPENAI_BASE_URL');
    expect(error.message).toContain(closed);
    expect(error.hint).toContain('--base-url');
    expect(error.hint).toContain('--model');
  });

  it('shares one model object between roles with the same settings', async () => {
    const { models } = await resolveModels({ env: key, flags: { roleModels: { userbot: 'gpt-4o' } } });
    expect(models.classifier).toBe(models.chatbot);
    expect(models.userbot).not.toBe(models.chatbot);
    expect(models.embedder.modelName).toBe('text-embedding-3-small');
  });

  it('uses the scripted provider for every role when given a script', async () => {
    const endpoints = await resolveEndpoints({
      env: key,
      flags: { provider: 'scripted', script: 'rules.json' },
    });
    expect(endpoints.chatbot).toMatchObject({ provider: 'scripted', script: 'rules.json' });
    await expect(resolveEndpoints({ flags: { provider: 'scripted' } })).rejects.toThrow(
      '--provider scripted needs a rules file',
    );
  });

  it('rejects a base URL that is not http(s), naming where it came from', async () => {
    await expect(resolveEndpoints({ env: { OPENAI_BASE_URL: 'localhost:11434' } })).rejects.toThrow(
      'OPENAI_BASE_URL is "localhost:11434", which is not an http(s) URL',
    );
  });
});

describe('the embedded model in the configuration', () => {
  it('answers every role when no server is configured and none answers', async () => {
    const closed = await closedUrl();
    const endpoints = await resolveEndpoints({ env: { META_AGENT_PROBE_URLS: closed } });
    for (const endpoint of Object.values(endpoints)) {
      expect(endpoint).toMatchObject({ provider: 'local', model: DEFAULT_LOCAL_MODEL.ref, automatic: true });
      expect(endpoint.source).toContain(`none answered at ${closed}`);
    }
  });

  it('is not a fallback under --provider openai, nor for a role whose server model is named', async () => {
    const closed = await closedUrl();
    const env = { META_AGENT_PROBE_URLS: closed };
    await expect(resolveEndpoints({ env, flags: { provider: 'openai' } })).rejects.toThrow(
      'no model server is configured',
    );
    await expect(resolveEndpoints({ env: { ...env, META_AGENT_MODEL: 'llama3.2' } })).rejects.toThrow(
      'no model server is configured',
    );
  });

  it('shares the work with a server: local for the classifier, the server for the rest', async () => {
    const endpoints = await resolveEndpoints({
      env: key,
      flags: { roleModels: { classifier: 'local' } },
    });
    expect(endpoints.classifier).toMatchObject({ provider: 'local', model: DEFAULT_LOCAL_MODEL.ref });
    expect(endpoints.classifier).not.toHaveProperty('automatic');
    expect(endpoints.chatbot).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini' });
    const { models } = await resolveModels({
      env: { ...key, META_AGENT_CLASSIFIER_MODEL: 'local:/models/tiny.gguf' },
    });
    expect(models.classifier.id).toBe('local:/models/tiny.gguf');
    expect(models.classifier.modelName).toBe('tiny');
    expect(models.chatbot.id).toMatch(/^openai:gpt-4o-mini@/);
  });

  it('runs every role embedded under --provider local, on the GGUF --model names, in one model object', async () => {
    const { endpoints, models } = await resolveModels({
      env: key,
      flags: { provider: 'local', model: 'hf:Qwen/Qwen2.5-3B-Instruct-GGUF/qwen2.5-3b-instruct-q4_k_m.gguf' },
    });
    expect(endpoints.chatbot).toMatchObject({
      provider: 'local',
      model: 'hf:Qwen/Qwen2.5-3B-Instruct-GGUF/qwen2.5-3b-instruct-q4_k_m.gguf',
    });
    expect(endpoints.embedder).toMatchObject({
      provider: 'local',
      model: 'hf:Qwen/Qwen2.5-3B-Instruct-GGUF/qwen2.5-3b-instruct-q4_k_m.gguf',
    });
    expect(models.classifier).toBe(models.chatbot);
    expect(models.embedder).toBe(models.chatbot);
    await expect(
      resolveEndpoints({ flags: { provider: 'local', baseUrl: 'http://127.0.0.1:1/v1' } }),
    ).rejects.toThrow('--base-url does not apply to --provider local');
  });

  it('under --provider local, takes server model names from the environment or the graph for no file', async () => {
    const endpoints = await resolveEndpoints({
      env: { META_AGENT_MODEL: 'llama3.2', META_AGENT_CLASSIFIER_MODEL: '/models/small.gguf' },
      graph: { userbot: { model: 'gpt-4o' } },
      flags: { provider: 'local' },
    });
    expect(endpoints.chatbot).toMatchObject({ provider: 'local', model: DEFAULT_LOCAL_MODEL.ref });
    expect(endpoints.userbot).toMatchObject({ provider: 'local', model: DEFAULT_LOCAL_MODEL.ref });
    expect(endpoints.classifier).toMatchObject({ provider: 'local', model: '/models/small.gguf' });
  });

  it('lets a graph file ask for the embedded model but not name a GGUF of its own', async () => {
    const endpoints = await resolveEndpoints({ env: key, graph: { classifier: { model: 'local' } } });
    expect(endpoints.classifier).toMatchObject({ provider: 'local', model: DEFAULT_LOCAL_MODEL.ref });
    for (const model of ['local:hf:evil/models-GGUF/x.gguf', 'local:/tmp/x.gguf']) {
      await expect(resolveEndpoints({ env: key, graph: { classifier: { model } } })).rejects.toThrow(
        `the graph's config.models.classifier is "${model}": a graph file may ask for the embedded model`,
      );
    }
  });

  it('refuses a malformed Hugging Face reference before any work', async () => {
    await expect(
      resolveEndpoints({ env: key, flags: { roleModels: { classifier: 'local:hf:../../etc/passwd.gguf' } } }),
    ).rejects.toBeInstanceOf(UserError);
  });
});
