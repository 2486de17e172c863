import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cooperativeDesigner, promptKind } from '../fixtures/design/replies.js';
import { closedUrl, startOpenAIServer, type OpenAIServer } from '../support/openai-server.js';
import { runCli } from '../support/run-cli.js';

// Runs the built CLI: `npx tsc -p .` first.
let server: OpenAIServer | undefined;
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'design-cli-'));
});

afterEach(async () => {
  await server?.close();
  server = undefined;
  await rm(dir, { recursive: true, force: true });
});

function designArgs(...extra: string[]): string[] {
  return [
    'design',
    'a tutor bot that teaches fractions',
    '-o',
    dir,
    '--base-url',
    server!.url,
    '--model',
    'gpt-4o-mini',
    ...extra,
  ];
}

describe('meta-agent design', () => {
  it('writes the graph and its views, prints a line per stage and a summary with the chat command', async () => {
    server = await startOpenAIServer({ reply: cooperativeDesigner(4) });
    const result = await runCli(designArgs('--name', 'tutor', '--concurrency', '8'));
    expect(result.stderr).not.toMatch(/at .*\.js:\d+/);
    expect(result.code).toBe(0);
    for (const ext of ['autogram.json', 'dot', 'svg', 'html'])
      expect(existsSync(join(dir, `tutor.${ext}`))).toBe(true);

    const stages = result.stderr.split('\n').filter((line) => line.startsWith('✓'));
    expect(stages.map((line) => line.split(' ')[1])).toEqual([
      'outline',
      'dot',
      'fields',
      'assemble',
      'lint',
      'save',
    ]);
    expect(result.stderr).toMatch(/✓ dot [\d.]+ s \(4 nodes, 4 edges\)/);

    expect(result.stdout).toContain('designed tutor');
    expect(result.stdout).toMatch(/graph\s+4 nodes, 5 edges/);
    expect(result.stdout).toMatch(/calls\s+6 model calls in 3 sequential round trips/);
    expect(result.stdout).toMatch(/tokens\s+[\d,]+ in, [\d,]+ out/);
    expect(result.stdout).toMatch(/cost\s+\$\d+\.\d{4} \(estimated\)/);
    expect(result.stdout).toMatch(/time\s+[\d.]+ s/);
    expect(result.stdout).toContain(`meta-agent chat ${join(dir, 'tutor.autogram.json')}`);
    expect(result.stdout).not.toContain('[scripted]');
  });

  it('saves a graph that meta-agent validate accepts and meta-agent chat runs, as it is', async () => {
    server = await startOpenAIServer({ reply: cooperativeDesigner(5) });
    expect((await runCli(designArgs('--name', 'tutor'))).code).toBe(0);
    const graph = join(dir, 'tutor.autogram.json');
    const validated = await runCli(['validate', graph]);
    expect(validated.code).toBe(0);
    const chat = await runCli(['chat', graph, '--base-url', server.url, '--model', 'gpt-4o-mini'], {
      input: 'I already know part 1.\n',
    });
    expect(chat.stderr).not.toMatch(/^error:/m);
    expect(chat.code).toBe(0);
    expect(chat.stdout).toContain('Let us look at the next part of the lesson.');
  });

  it('names the graph after the description when no --name is given', async () => {
    server = await startOpenAIServer({ reply: cooperativeDesigner(3) });
    const result = await runCli(designArgs());
    expect(result.code).toBe(0);
    expect(existsSync(join(dir, 'tutor_bot_teaches.autogram.json'))).toBe(true);
  });

  it('exits 1 with one clear line and keeps the partial work when the model never draws usable DOT', async () => {
    const base = cooperativeDesigner(4);
    server = await startOpenAIServer({
      reply: (body) =>
        ['dot', 'redraw'].includes(promptKind(body)) ? 'Sorry, I cannot draw graphs.' : base(body),
    });
    const result = await runCli(designArgs('--name', 'tutor'));
    expect(result.code).toBe(1);
    const errors = result.stderr.split('\n').filter((line) => line.startsWith('error:'));
    expect(errors).toEqual([
      'error: design failed at the dot stage: no usable DOT graph after 3 tries; last problem: the answer contains no DOT graph: write the graph as digraph { … } in a ```dot code block',
    ]);
    expect(result.stderr).toMatch(
      /^hint: a stronger model usually gets further \(--model\); partial work kept in .*tutor\.partial\.outline\.md/m,
    );
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(join(dir, 'tutor.partial.last-answer.txt'))).toBe(true);
    expect(existsSync(join(dir, 'tutor.autogram.json'))).toBe(false);
  });

  it('clears the partial work of an earlier failed design once one of that name succeeds', async () => {
    let draws = true;
    const base = cooperativeDesigner(4);
    server = await startOpenAIServer({
      reply: (body) =>
        !draws && ['dot', 'redraw'].includes(promptKind(body)) ? 'No graphs today.' : base(body),
    });
    draws = false;
    expect((await runCli(designArgs('--name', 'tutor'))).code).toBe(1);
    const partial = async () => (await readdir(dir)).filter((file) => file.includes('.partial.')).sort();
    expect(await partial()).toContain('tutor.partial.outline.md');

    draws = true;
    expect((await runCli(designArgs('--name', 'tutor'))).code).toBe(0);
    expect(existsSync(join(dir, 'tutor.autogram.json'))).toBe(true);
    expect(await partial()).toEqual([]);
  });

  it('stops at Ctrl+C with exit 130, keeping the outline, without waiting for the model', async () => {
    const base = cooperativeDesigner(4);
    server = await startOpenAIServer({
      // The DOT draft never comes back in time: the user gives up waiting.
      reply: (body) => (promptKind(body) === 'dot' ? { text: 'digraph {}', delayMs: 60_000 } : base(body)),
    });
    const started = Date.now();
    const result = await runCli(designArgs('--name', 'tutor'), {
      interruptWhen: (stderr) => stderr.includes('✓ outline'),
    });
    expect(result.code).toBe(130);
    expect(result.stderr).toMatch(/^error: design interrupted at the dot stage$/m);
    expect(result.stderr).toMatch(/^hint: partial work kept in .*tutor\.partial\.outline\.md/m);
    expect(existsSync(join(dir, 'tutor.partial.outline.md'))).toBe(true);
    // It ended on the interrupt, not when the slow answer came.
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('keeps the outline when a later answer is too large, ending in one line instead of a bug', async () => {
    const base = cooperativeDesigner(4);
    server = await startOpenAIServer({
      reply: (body) => (promptKind(body) === 'dot' ? { fault: 'huge', bytes: 40 * 1024 * 1024 } : base(body)),
    });
    const result = await runCli(designArgs('--name', 'tutor'));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: design failed at the dot stage: .*larger than 32 MiB/m);
    expect(result.stderr).not.toMatch(/looks like a bug/);
    expect(existsSync(join(dir, 'tutor.partial.outline.md'))).toBe(true);
  });

  it('passes on the advice of an error it cannot get past, such as a server that does not answer', async () => {
    const url = await closedUrl();
    const result = await runCli([
      'design',
      'a tutor bot',
      '-o',
      dir,
      '--base-url',
      url,
      '--model',
      'gpt-4o-mini',
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^error: design failed at the outline stage: node "write_outline": .*answer/m,
    );
    expect(result.stderr).toMatch(
      /^hint: start the server .*; partial work kept in .*tutor_bot\.partial\.json/m,
    );
  });

  it('says a rate limit while writing fields is one, with how long the server asked to wait', async () => {
    const base = cooperativeDesigner(4);
    server = await startOpenAIServer({
      reply: (body) =>
        promptKind(body) === 'fields' ? { fault: 'rate-limit', retryAfterSeconds: 90 } : base(body),
    });
    const result = await runCli(designArgs('--name', 'tutor'));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^error: design failed at the fields stage: node \S+: .*is still rate-limiting/m,
    );
    expect(result.stderr).toMatch(
      /^hint: the server asked to wait 90 s \(Retry-After\): try again after that; if it keeps happening, check the rate limits of your plan/m,
    );
    expect(result.stderr).not.toContain('stronger model');
  });

  it('checks the design in simulated conversations and reports coverage and agreement', async () => {
    server = await startOpenAIServer({ reply: cooperativeDesigner(4) });
    const result = await runCli(designArgs('--name', 'tutor', '--check', '2'));
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/✓ check [\d.]+ s \(\d+\/\d+ edges covered, classifier agreed \d+\/\d+\)/);
    expect(result.stdout).toMatch(
      /check\s+2 conversations: \d+\/\d+ edges covered, classifier agreed \d+\/\d+/,
    );
  });

  it('says [scripted] when the answers come from the scripted provider', async () => {
    const script = fileURLToPath(new URL('../../examples/quiz-designer.script.json', import.meta.url));
    const result = await runCli([
      'design',
      'a quiz bot',
      '-o',
      dir,
      '--provider',
      'scripted',
      '--script',
      script,
    ]);
    expect(result.stderr).not.toMatch(/^error:/m);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^designed quiz_bot \[scripted: the answers came from a rules file, not a model\]/,
    );
    expect(result.stdout).toMatch(/model\s+scripted rules .*quiz-designer\.script\.json \[scripted\]/);
    expect(result.stdout).toMatch(/cost\s+none \(local or scripted model\)/);
    expect(existsSync(join(dir, 'quiz_bot.autogram.json'))).toBe(true);
  });

  it('refuses a name that cannot be a file name', async () => {
    server = await startOpenAIServer({ reply: cooperativeDesigner(3) });
    const result = await runCli(designArgs('--name', '../evil'));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('error: "../evil" cannot name a graph file');
    expect(server.chatRequests()).toHaveLength(0);
  });
});
