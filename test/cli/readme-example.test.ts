import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scriptedExample } from '../support/examples.js';
import { runCli } from '../support/run-cli.js';

describe("the README's offline session", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'readme-example-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('designs the quiz bot from scripted answers and chats with it as the README shows', async () => {
    const design = await runCli(['design', 'a quiz bot', ...scriptedExample('quiz-designer')], { cwd: dir });
    expect(design.code).toBe(0);
    expect(design.stdout).toContain('chat with it:\n  meta-agent chat quiz_bot.autogram.json');

    const chat = await runCli(['chat', 'quiz_bot.autogram.json', ...scriptedExample('quiz-chat')], {
      cwd: dir,
      input: 'yes please\nMars\nno thanks\n',
    });
    expect(chat).toMatchObject({ code: 0 });
    expect(chat.stdout).toBe(
      [
        'Hello! Would you like a short quiz?',
        'Which planet is known as the Red Planet?',
        'Right, Mars! Fancy another question?',
        'Goodbye, and thanks for stopping by!',
        '',
      ].join('\n'),
    );
  });

  it('runs the haiku goal from scripted answers as the README shows', async () => {
    const goals = [
      '--goal',
      'Write a haiku about autumn to haiku.txt',
      '--goal',
      'Shut down when you are done',
    ];
    const run = await runCli(
      ['run', ...goals, '--workspace', 'haiku', '--yes', ...scriptedExample('haiku-run')],
      {
        cwd: dir,
      },
    );
    expect(run).toMatchObject({ code: 0 });
    const spend = String.raw` \[[\d,]+ tokens · \$0\.0000\]`;
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines.map((line) => line.replace(new RegExp(`${spend}$`), ' [spend]'))).toEqual([
      'step 1 · search_files {"directory":"."} → There are no files in the workspace. [spend]',
      'step 2 · write_to_file {"file":"haiku.txt","text":"Crisp leaves drift and spin\\ngold light thins on the cold hill\\nthe year exhales slow\\n"} → Wrote 84 bytes to haiku.txt. [spend]',
      'step 3 · read_file {"file":"haiku.txt"} → Crisp leaves drift and spin gold light thins on the cold hill the year exhales slow [spend]',
      'step 4 · task_complete {"reason":"haiku.txt holds a haiku about autumn"} → Shutting down. [spend]',
      expect.stringMatching(
        /^ended: task_complete \(haiku.txt holds a haiku about autumn\) · 4 of 50 steps · [\d,]+ tokens · \$0\.0000 · [\d.]+ s$/,
      ),
    ]);
    expect(run.stderr).toMatch(
      /^\[run\] saving to haiku\/\.meta-agent\/runs\/Agent-[0-9a-f]{12}\.run\.json after every step$/m,
    );
  });
});
