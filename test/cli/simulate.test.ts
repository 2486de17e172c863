import { describe, expect, it } from 'vitest';
import { startOpenAIServer, type ChatRequestBody } from '../support/openai-server.js';
import { runCli } from '../support/run-cli.js';

const QUIZ = 'test/fixtures/cli/quiz.autogram.json';
/** The userbot follows its instruction; the classifier always says the answer was correct. */
const SCRIPT = 'test/fixtures/cli/quiz.script.json';
const SCRIPTED = ['--provider', 'scripted', '--script', SCRIPT];

interface Report {
  seed: number;
  conversations: number;
  nodes: { node: string; samples: number; agreed: number }[];
  neverCovered: { node: string; transition: string }[];
  transcripts: { turns: { node: string; aimedAt?: string; taken?: string; user: string }[] }[];
}

const simulate = (...args: string[]) => runCli(['simulate', QUIZ, ...SCRIPTED, ...args]);

describe('meta-agent simulate', () => {
  it('measures the classifier against the transition the simulated user aimed at, and finds uncovered edges', async () => {
    const result = await simulate('--conversations', '3', '--turns', '4', '--seed', '7', '--json');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as Report;
    expect(report).toMatchObject({ seed: 7, conversations: 3 });
    const asks = report.transcripts.flatMap((c) => c.turns).filter((t) => t.node === 'ask');
    for (const turn of asks) expect(turn.user).toBe(turn.aimedAt === 'right' ? '4' : '5');
    expect(asks.some((t) => t.aimedAt === 'wrong')).toBe(true);
    // The classifier always answers "correct": it agrees exactly when the right answer was aimed at.
    expect(report.nodes).toEqual([
      { node: 'ask', samples: asks.length, agreed: asks.filter((t) => t.aimedAt === 'right').length },
    ]);
    expect(report.neverCovered).toEqual([
      { node: 'ask', transition: 'wrong' },
      { node: 'wrong', transition: 'ask' },
    ]);
    const progress = result.stderr.split('\n').filter((line) => line.startsWith('conversation '));
    expect(progress).toHaveLength(3);
    expect(progress[0]).toMatch(
      /^conversation 1\/3: 4 user replies, stopped at the turn limit; classifier agreed \d of \d$/,
    );
    expect(result.stderr).toMatch(/^\[scripted\] /);
  });

  it('prints a readable table of agreement per node and the edges never covered', async () => {
    const result = await simulate('-n', '2', '-t', '3', '--seed', '7');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^quiz: 2 simulated conversations of up to 3 user replies \(seed 7\)\n/);
    expect(result.stdout).toMatch(/^ {2}node +samples +agreed +agreement$/m);
    expect(result.stdout).toMatch(/^ {2}ask +\d+ +\d+ +\d+%$/m);
    expect(result.stdout).toContain('never covered (2 edges):\n  ask -> wrong\n  wrong -> ask\n');
  });

  it('repeats the same conversations for the same seed, and prints the seed it chose', async () => {
    const once = await simulate('-n', '2', '-t', '3', '--seed', '42', '--json');
    const again = await simulate('-n', '2', '-t', '3', '--seed', '42', '--json');
    expect(again.stdout).toBe(once.stdout);
    const unseeded = await simulate('-n', '1', '-t', '1');
    expect(unseeded.stderr).toMatch(/simulating 1 conversation of quiz \(seed \d+\)/);
  });

  it('stops at Ctrl+C with exit 130, reporting the conversations that finished', async () => {
    let calls = 0;
    const answer = (body: ChatRequestBody): string => {
      const prompt = body.messages.map((m) => m.content).join('\n');
      if (body.max_tokens === 1) return 'Yes';
      return prompt.includes('give the correct answer') ? '4' : prompt.includes('wrong answer') ? '5' : 'ok';
    };
    // A conversation of one reply makes two calls (the userbot's reply, the classifier's choice);
    // after the first conversation the models stop answering in any useful time.
    const server = await startOpenAIServer({
      reply: (body) => (++calls > 2 ? { text: answer(body), delayMs: 60_000 } : answer(body)),
    });
    try {
      const result = await runCli(
        ['simulate', QUIZ, '--base-url', server.url, '--model', 'm', '-n', '3', '-t', '1', '--json'],
        { interruptWhen: (stderr) => stderr.includes('conversation 1/3') },
      );
      expect(result.code).toBe(130);
      expect((JSON.parse(result.stdout) as Report).conversations).toBe(1);
      expect(result.stderr).toMatch(/^error: simulation interrupted after 1 of 3 conversations$/m);
    } finally {
      await server.close();
    }
  });

  it('refuses a turn count that is not a whole number, with exit 2', async () => {
    const result = await simulate('--turns', '0');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('expected a whole number of at least 1');
  });
});
