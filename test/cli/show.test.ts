import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';

describe('meta-agent show', () => {
  it('summarizes a spreadsheet: name, node count, start node, and each node with its edges', async () => {
    const { code, stdout } = await runCli(['show', 'test/fixtures/graphs/simple_example.csv']);
    expect(code).toBe(0);
    expect(stdout).toContain('simple_example (test/fixtures/graphs/simple_example.csv)');
    expect(stdout).toContain('4 nodes, start: ask_question; 0 errors, 0 warnings');
    expect(stdout).toContain(
      [
        'ask_question  chat_exact  [start]',
        '    Would you like me to tell you more about the latest advances in AI?',
        '    ? Does the user want to talk about ai?',
        '    → tell_about_ai  [yes]',
        '    → ask_user_preference  [no]',
      ].join('\n'),
    );
  });

  it('lists the members a visit transition can lead to', async () => {
    const { stdout } = await runCli(['show', 'test/fixtures/graphs/fraction_agent.csv']);
    expect(stdout).toContain('23 nodes, start: start1');
    expect(stdout).toContain('→ u.n (u.1, u.2, u.3, u.4, u.5)  [no]');
  });

  it('marks function and interjection nodes, calls and wildcard groups', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'meta-agent-show-'));
    const path = join(dir, 'marks.autogram.json');
    writeFileSync(
      path,
      JSON.stringify({
        name: 'marks',
        nodes: [
          { name: 'start', action: 'function', instruction: 's = summarize(text)', transitions: ['check.*'] },
          { name: 'check.a', action: 'chat', booleanCondition: 's.length > 10', transitions: ['start'] },
          { name: 'check.b', action: 'chat', transitions: ['start'] },
          {
            name: 'summarize(doc)',
            action: 'thought',
            instruction: 'summary = Summarize $doc',
            transitions: ['return summary'],
          },
          {
            name: 'stop',
            action: 'chat_exact',
            conditionInterjection: 'The user wants to stop',
            transitions: ['quit'],
          },
        ],
      }),
    );
    const { code, stdout } = await runCli(['show', path]);
    expect(code).toBe(0);
    expect(stdout).toContain(
      '    calls summarize(text), then continues below\n    → check.* (check.a, check.b)',
    );
    expect(stdout).toContain('    if s.length > 10');
    expect(stdout).toContain('summarize(doc)  thought  [function]');
    expect(stdout).toContain('stop  chat_exact  [interjection: The user wants to stop]');
  });

  it('explains itself with examples in --help', async () => {
    expect((await runCli(['show', '--help'])).stdout).toContain('$ meta-agent show fraction_agent.csv');
  });
});
