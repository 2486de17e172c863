import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startOpenAIServer, type OpenAIServer } from '../support/openai-server.js';
import { runCli } from '../support/run-cli.js';

const servers: OpenAIServer[] = [];
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'meta-agent-env-file-'));
});

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
  await rm(dir, { recursive: true, force: true });
});

async function server(answer: string): Promise<OpenAIServer> {
  const started = await startOpenAIServer({ defaultAnswer: answer });
  servers.push(started);
  return started;
}

/**
 * Nothing listens here: without the .env, `ask` finds no model server on this machine. An empty
 * META_AGENT_ENV_FILE reads ./.env, which runCli otherwise turns off.
 */
const NO_SERVER = { META_AGENT_PROBE_URLS: 'http://127.0.0.1:9/v1', META_AGENT_ENV_FILE: '' };

describe('the .env file of the current folder', () => {
  it('configures the model server', async () => {
    const local = await server('Bonjour');
    await writeFile(join(dir, '.env'), `OPENAI_BASE_URL=${local.url}\nMETA_AGENT_MODEL="llama3.2"\n`);
    const result = await runCli(['ask', 'Say hello in French'], { cwd: dir, env: NO_SERVER });
    expect(result.stderr).not.toContain('error');
    expect(result.stdout).toBe('Bonjour\n');
    expect(local.chatRequests()[0]?.model).toBe('llama3.2');
  });

  it("loses to the shell's own variables, but fills those set empty", async () => {
    const fromFile = await server('from the file');
    const fromShell = await server('from the shell');
    await writeFile(join(dir, '.env'), `OPENAI_BASE_URL=${fromFile.url}\nMETA_AGENT_MODEL=from-file\n`);
    const result = await runCli(['ask', 'Hi'], {
      cwd: dir,
      env: { ...NO_SERVER, OPENAI_BASE_URL: fromShell.url, META_AGENT_MODEL: '' },
    });
    expect(result.stdout).toBe('from the shell\n');
    expect(fromFile.chatRequests()).toHaveLength(0);
    expect(fromShell.chatRequests()[0]?.model).toBe('from-file');
  });

  it('names the lines it cannot read in one warning, once, even when the command restarts for the sandbox', async () => {
    const fibonacci = resolve('test/fixtures/engine/fibonacci.autogram.json');
    await writeFile(
      join(dir, '.env'),
      '# settings\nOPENAI_API_KEY sk-test\nMETA_AGENT_PROMPT="two\nlines"\nexport HF_TOKEN=x\n',
    );
    const result = await runCli(['call', fibonacci, 'fibonacci(10)'], { cwd: dir, env: NO_SERVER });
    expect(result).toMatchObject({
      code: 0,
      stdout: '34\n',
      stderr: 'warning: .env line 2 is not NAME=value, so it is ignored\n',
    });
  });

  it('warns in one line when .env cannot be read, and goes on', async () => {
    await mkdir(join(dir, '.env'));
    const result = await runCli(['--version'], { cwd: dir, env: NO_SERVER });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('warning: cannot read .env (a folder): its variables are not set\n');
  });
});
