import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { startOpenAIServer, type ChatRequestBody, type OpenAIServer } from '../support/openai-server.js';
import { freshDatabase } from '../support/postgres.js';
import { runCli } from '../support/run-cli.js';

const QUIZ = 'test/fixtures/cli/quiz.autogram.json';
const SCRIPTED = ['--provider', 'scripted', '--script', 'test/fixtures/cli/quiz.script.json'];

let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The quiz's models: the userbot follows its instruction, the classifier always says "correct". */
function quizAnswer(body: ChatRequestBody): string {
  const prompt = body.messages.map((m) => m.content).join('\n');
  if (body.max_tokens === 1) return 'Yes';
  return prompt.includes('give the correct answer') ? '4' : prompt.includes('wrong answer') ? '5' : 'ok';
}

/** Which process took each conversation of the simulation `simulation`, by workflow id. */
async function takers(url: string, simulation: string): Promise<Map<string, string>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; executor: string; status: string }>(
      `select workflow_uuid as id, executor_id as executor, status from dbos.workflow_status
        where workflow_uuid like $1 and queue_name = 'simulations'`,
      [`simulate:${simulation}:%`],
    );
    for (const row of rows) expect(row.status).toBe('SUCCESS');
    return new Map(rows.map((row) => [row.id, row.executor]));
  } finally {
    await client.end();
  }
}

describe('meta-agent simulate on PostgreSQL', () => {
  it('gives the same report as without a database', async () => {
    const url = await freshDatabase();
    const args = ['simulate', QUIZ, ...SCRIPTED, '-n', '4', '-t', '3', '--seed', '7', '--json'];
    const files = await runCli(args);
    const postgres = await runCli([...args, '--simulation', 'same'], {
      env: { META_AGENT_DATABASE_URL: url },
    });
    expect(postgres.stderr).toContain('simulating 4 conversations of quiz (seed 7, simulation same)');
    expect(postgres.code).toBe(0);
    expect(postgres.stdout).toBe(files.stdout);
    const progress = (stderr: string) =>
      stderr.split('\n').filter((line) => line.startsWith('conversation '));
    expect(progress(postgres.stderr)).toEqual(progress(files.stderr));
    expect([...(await takers(url, 'same')).keys()].sort()).toEqual(
      [1, 2, 3, 4].map((i) => `simulate:same:${i}`),
    );
  });

  it('spreads the conversations over every process that takes from the queue, and never simulates a finished one again', async () => {
    const url = await freshDatabase();
    server = await startOpenAIServer({ reply: (body) => ({ text: quizAnswer(body), delayMs: 400 }) });
    const args = ['simulate', QUIZ, '--base-url', server.url, '--model', 'm', '-n', '6', '-t', '1'];
    const run = (extra: string[] = [], watch?: (stderr: string) => boolean) =>
      runCli([...args, '--simulation', 'spread', '--seed', '3', '--json', ...extra], {
        env: { META_AGENT_DATABASE_URL: url, META_AGENT_SIMULATION_CONCURRENCY: '1' },
        // Only watched, never killed: says when the command has begun the simulation.
        ...(watch && { killWhen: watch }),
      });
    // Two commands on one simulation, the second once the first has begun it: each takes
    // conversations from the queue, one at a time.
    let begun!: () => void;
    const firstBegun = new Promise<void>((resolve) => (begun = resolve));
    const firstRun = run([], (stderr) => stderr.includes('conversations of quiz') && (begun(), false));
    await firstBegun;
    const [first, second] = await Promise.all([firstRun, run()]);
    expect([first.code, second.code]).toEqual([0, 0]);
    expect(second.stdout).toBe(first.stdout);
    expect(JSON.parse(first.stdout)).toMatchObject({ seed: 3, conversations: 6 });
    const taken = await takers(url, 'spread');
    expect(taken.size).toBe(6);
    expect(new Set(taken.values()).size).toBe(2);
    // Six conversations of one reply: a userbot and a classifier call each, asked once in all.
    const calls = server.chatRequests().length;
    expect(calls).toBe(12);

    const again = await run(['-n', '6']);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(first.stdout);
    expect(server.chatRequests()).toHaveLength(calls);

    const otherSeed = await run(['--seed', '4']);
    expect(otherSeed.code).toBe(2);
    expect(otherSeed.stderr).toContain('simulation "spread" began with seed 3');
  }, 60_000);

  it('refuses --simulation without a database', async () => {
    const result = await runCli(['simulate', QUIZ, ...SCRIPTED, '--simulation', 'x']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--simulation names a simulation kept in PostgreSQL');
  });
});
