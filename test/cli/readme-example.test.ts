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
});
