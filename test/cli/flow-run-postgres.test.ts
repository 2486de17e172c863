import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { startOpenAIServer, type OpenAIServer } from '../support/openai-server.js';
import { freshDatabase } from '../support/postgres.js';
import { runCli, type RunCliOptions } from '../support/run-cli.js';

let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const chain = {
  name: 'chain',
  inputs: { topic: {} },
  nodes: [
    { name: 'facts', prompt: 'Facts about $db.topic$?' },
    { name: 'angles', prompt: 'Angles on $db.topic$?' },
    { name: 'summary', prompt: 'Summarize.', dependencies: ['facts', 'angles'] },
  ],
};

async function chainFolder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'flow-pg-'));
  await writeFile(join(dir, 'chain.flow.json'), JSON.stringify(chain));
  return dir;
}

/** The last user message of a chat request. */
function question(body: { messages: { role: string; content: unknown }[] }): string {
  return String(body.messages.at(-1)!.content);
}

/**
 * A model that answers `re: QUESTION`, but does not answer "Summarize." in any useful time until
 * `answer()`: the pass is stopped there, then goes on with the same model (a pass keeps the models it
 * began with), which now answers it `again: Summarize.`.
 */
async function summaryHangs(): Promise<{ server: OpenAIServer; answer: () => void }> {
  let hang = true;
  const started = await startOpenAIServer({
    reply: (body) =>
      question(body) !== 'Summarize.'
        ? { text: `re: ${question(body)}` }
        : hang
          ? { text: 'late', delayMs: 60_000 }
          : { text: 'again: Summarize.' },
  });
  return { server: started, answer: () => (hang = false) };
}

/** What was asked after the first `since` requests, each question once. */
function askedSince(since: number): string[] {
  return [...new Set(server!.chatRequests().slice(since).map(question))];
}

/** `meta-agent flow run chain.flow.json …` on the database `url`, against the loopback server. */
function chainRun(dir: string, url: string, args: string[], options: RunCliOptions = {}) {
  return runCli(['flow', 'run', 'chain.flow.json', ...args, '--base-url', server!.url, '--model', 'm'], {
    cwd: dir,
    env: { META_AGENT_DATABASE_URL: url },
    ...options,
  });
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

/** The nodes of pass 1 of the run `key` committed in the store. */
async function committed(url: string, key: string): Promise<string[]> {
  const rows = await query<{ node: string }>(
    url,
    `select node from meta_agent.flow_run_results where key = '${key}' and pass = 1 order by node`,
  );
  return rows.map((row) => row.node);
}

describe('meta-agent flow run on PostgreSQL', () => {
  it('gives the same report as with files, the pass a workflow of the run kept in the database', async () => {
    const url = await freshDatabase();
    const args = [
      'flow',
      'run',
      'examples/plan-task.flow.json',
      '--provider',
      'scripted',
      '--script',
      'examples/plan-task.script.json',
      '--json',
    ];
    const reportOf = (stdout: string) => {
      const { ms: _ms, ...report } = JSON.parse(stdout.trim().split('\n').at(-1)!);
      return report;
    };
    const files = await runCli(args);
    const postgres = await runCli([...args, '--state', 'plan'], { env: { META_AGENT_DATABASE_URL: url } });
    expect(postgres.stderr).not.toContain('error');
    expect(postgres.code).toBe(0);
    expect(reportOf(postgres.stdout)).toEqual(reportOf(files.stdout));
    const [run] = await query<{ state: { passes: number } }>(
      url,
      `select state from meta_agent.flow_runs where key = 'plan'`,
    );
    expect(run!.state.passes).toBe(1);
    const workflows = await query<{ id: string; status: string }>(
      url,
      `select workflow_uuid as id, status from dbos.workflow_status`,
    );
    expect(workflows).toEqual([{ id: 'flow:plan:pass:1', status: 'SUCCESS' }]);
  });

  it('asks each node of the model it names and keeps order-only edges, as a durable pass', async () => {
    const url = await freshDatabase();
    const flow = JSON.parse(await readFile('examples/crafter-planner.flow.json', 'utf8')) as {
      config: { models: Record<string, { model: string }> };
      nodes: { name: string; prompt: string; model: string }[];
    };
    const nodeOf = (body: { messages: { role: string; content: unknown }[] }) =>
      flow.nodes.find((node) => question(body).startsWith(node.prompt.slice(0, 40)))!;
    server = await startOpenAIServer({
      models: Object.values(flow.config.models).map((ref) => ref.model),
      rejectUnknownModels: true,
      reply: (body) => `answer of ${nodeOf(body).name}`,
    });
    const result = await runCli(
      [
        'flow',
        'run',
        'examples/crafter-planner.flow.json',
        '--base-url',
        server.url,
        '--state',
        'crafter',
        '--json',
      ],
      { env: { META_AGENT_DATABASE_URL: url } },
    );
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout.trim().split('\n').at(-1)!) as {
      results: Record<string, { model?: string }>;
    };
    const asked = new Map(server.chatRequests().map((body) => [nodeOf(body).name, body.model]));
    const rounds = new Map(
      server.requests
        .filter((request) => request.path === '/v1/chat/completions')
        .map((request) => [
          nodeOf(request.body as { messages: { role: string; content: unknown }[] }).name,
          request.round,
        ]),
    );
    for (const node of flow.nodes) {
      expect(asked.get(node.name), node.name).toBe(flow.config.models[node.model]!.model);
      expect(report.results[node.name]!.model, node.name).toBe(flow.config.models[node.model]!.model);
    }
    expect(rounds.get('unknown')!).toBeGreaterThan(rounds.get('kb-add')!);
  });

  it("asks a step's nodes at once, up to --concurrency", async () => {
    const url = await freshDatabase();
    server = await startOpenAIServer({
      latencyMs: 300,
      reply: (body) => ({ text: `re: ${question(body)}` }),
    });
    const dir = await chainFolder();
    const together = await chainRun(dir, url, ['-i', 'topic=tides']);
    expect(together.code).toBe(0);
    expect(server.maxInFlight).toBe(2);
    await server.close();
    server = await startOpenAIServer({
      latencyMs: 300,
      reply: (body) => ({ text: `re: ${question(body)}` }),
    });
    const alone = await chainRun(dir, url, ['-i', 'topic=tides', '--concurrency', '1']);
    expect(alone.code).toBe(0);
    expect(server.maxInFlight).toBe(1);
    expect(alone.stdout).toBe(together.stdout);
  });

  it('finishes a pass killed midway without asking its committed nodes again', async () => {
    const url = await freshDatabase();
    const model = await summaryHangs();
    server = model.server;
    const dir = await chainFolder();
    const killed = await chainRun(dir, url, ['-i', 'topic=tides', '--state', 'tides'], {
      killWhen: (stderr) => stderr.includes('[step 2]'),
    });
    expect(killed.signal).toBe('SIGKILL');
    expect(await committed(url, 'tides')).toEqual(['angles', 'facts']);
    const asked = server.chatRequests().length;
    model.answer();
    // The run's pass is the dead process's workflow: the reaper of the command run again puts it back.
    const resumed = await chainRun(dir, url, ['--state', 'tides']);
    expect(resumed.stderr).toContain('waiting for it');
    expect(resumed.code).toBe(0);
    expect(askedSince(asked)).toEqual(['Summarize.']);
    expect(resumed.stdout.trim()).toBe('again: Summarize.');
    expect(await committed(url, 'tides')).toEqual(['angles', 'facts', 'summary']);
  }, 60_000);

  it('stops on Ctrl+C, and the same command finishes the pass without asking its committed nodes again', async () => {
    const url = await freshDatabase();
    const model = await summaryHangs();
    server = model.server;
    const dir = await chainFolder();
    const stopped = await chainRun(dir, url, ['-i', 'topic=tides', '--state', 'tides'], {
      interruptWhen: (stderr) => stderr.includes('[step 2]'),
    });
    expect(stopped.code).toBe(130);
    expect(stopped.stderr).toContain(
      'flow pass stopped; finish it with: meta-agent flow run chain.flow.json --state tides',
    );
    const asked = server.chatRequests().length;
    model.answer();
    const finished = await chainRun(dir, url, ['--state', 'tides']);
    expect(finished.code).toBe(0);
    expect(askedSince(asked)).toEqual(['Summarize.']);
    expect(finished.stdout.trim()).toBe('again: Summarize.');
  });
});
