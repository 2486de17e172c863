import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';

const examples = fileURLToPath(new URL('../../examples/', import.meta.url));

describe("the README's offline session", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'readme-example-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('designs the quiz bot from scripted answers and chats with it as the README shows', async () => {
    const design = await runCli(
      [
        'design',
        'a quiz bot',
        '--provider',
        'scripted',
        '--script',
        join(examples, 'quiz-designer.script.json'),
      ],
      { cwd: dir },
    );
    expect(design.code).toBe(0);
    expect(design.stdout).toContain('chat with it:\n  meta-agent chat quiz_bot.autogram.json');

    const chat = await runCli(
      [
        'chat',
        'quiz_bot.autogram.json',
        '--provider',
        'scripted',
        '--script',
        join(examples, 'quiz-chat.script.json'),
      ],
      { cwd: dir, input: 'yes please\nMars\nno thanks\n' },
    );
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
