/**
 * AutoGRAMS spreadsheets through the real CLI, as a user runs them: the two examples shipped with
 * AutoGRAMS (verbatim copies of ../shared/autograms-examples/), and a spreadsheet written the way the
 * AutoGRAMS documentation describes one (documented_tutor.csv: prompt nodes, a function and a local
 * function with arguments, `$var` in a reply and a transition question, conditional text in a thought, chat_suffix,
 * a per-node question prompt, `p.*` with boolean conditions, `u.n`, an interjection with an example,
 * and `<end>`).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';

const FIXTURES = 'test/fixtures/graphs';
const TUTOR = `${FIXTURES}/documented_tutor.csv`;
const TUTOR_SCRIPT = `${FIXTURES}/documented_tutor.script.json`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'meta-agent-spreadsheets-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Writes a rules file for `--provider scripted` and returns its path. */
async function script(name: string, rules: object[]): Promise<string> {
  const path = join(dir, `${name}.json`);
  await writeFile(path, JSON.stringify({ rules }));
  return path;
}

describe('AutoGRAMS spreadsheets in the CLI', () => {
  it('validates the AutoGRAMS examples and a spreadsheet written as its documentation describes', async () => {
    const result = await runCli([
      'validate',
      `${FIXTURES}/simple_example.csv`,
      `${FIXTURES}/fraction_agent.csv`,
      TUTOR,
    ]);
    expect(result.stderr).toBe('');
    expect(result.stdout.split('\n').filter(Boolean)).toEqual([
      `${FIXTURES}/simple_example.csv: 4 nodes, 0 errors, 0 warnings`,
      `${FIXTURES}/fraction_agent.csv: 23 nodes, 0 errors, 0 warnings`,
      `${TUTOR}: 17 nodes, 0 errors, 0 warnings`,
    ]);
    expect(result.code).toBe(0);
  });

  it('refuses to run a spreadsheet AutoGRAMS refuses, and validate says what to write instead (autograms/autogram_utils.py:497-499, graph_utils/graph.py:217)', async () => {
    const path = join(dir, 'refused.csv');
    await writeFile(
      path,
      `Name,Action,Instruction,Transitions
start1,chat_exact,It costs $ 5.,pick.*
pick.a,chat_exact,Paid.,start1
`,
    );
    const chat = await runCli(['chat', path, '--provider', 'scripted'], { input: '' });
    expect(chat.code).toBe(2);
    expect(chat.stderr).toBe(
      `error: ${path}: the graph has 2 errors, the first: start1: transition "pick.*" needs nodes "pick.a" and "pick.b" at least; there is no "pick.b"\n` +
        `hint: run "meta-agent validate ${path}" to see them all\n`,
    );
    const validate = await runCli(['validate', path]);
    expect(validate.stdout).toContain(
      'start1: space after "$" in its instruction ("costs $ 5."): "$" starts a variable name\n' +
        '         hint: if you meant a dollar sign, write "\\$" instead',
    );
  });

  it('chats with simple_example.csv through the scripted provider', async () => {
    const rules = await script('simple', [
      { role: 'classifier', reply: 'Yes' },
      {
        role: 'chatbot',
        match: 'Tell the user more about the latest advances in AI',
        reply: 'AutoGRAMS is out.',
      },
    ]);
    const result = await runCli(
      ['chat', `${FIXTURES}/simple_example.csv`, '--provider', 'scripted', '--script', rules],
      { input: 'yes please\n' },
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      'Would you like me to tell you more about  the latest advances in AI?\nAutoGRAMS is out.\n',
    );
  });

  it('chats with fraction_agent.csv through the scripted provider', async () => {
    const rules = await script('fractions', [
      { role: 'classifier', reply: 'No' },
      {
        role: 'chatbot',
        match: "/Introduce yourself as the tutor[^\\n]*\\nAgent's reply:$/",
        reply: 'Hi, I am your fractions tutor.',
      },
      { role: 'chatbot', reply: 'Ready when you are.' },
    ]);
    const result = await runCli(
      ['chat', `${FIXTURES}/fraction_agent.csv`, '--provider', 'scripted', '--script', rules],
      { input: 'hello\nready\n' },
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('Hi, I am your fractions tutor.\nReady when you are.\nReady when you are.\n');
  });

  it('chats with the documented tutor: functions, $var, a wrong answer, a hint, a right one, goodbye', async () => {
    const result = await runCli(['chat', TUTOR, '--provider', 'scripted', '--script', TUTOR_SCRIPT], {
      input: 'yes\n67\nI do not know\n68\nno thanks\n',
    });
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n').filter(Boolean)).toEqual([
      'Hi! I am your arithmetic tutor. Shall we practise?',
      'What is 23 + 45?',
      'Not quite - check the ones.',
      'Add the ones first.',
      'Well done! Another one?',
      'Goodbye!',
    ]);
  });

  it('simulates the documented tutor until its simulated user is told <end>', async () => {
    const result = await runCli([
      'simulate',
      TUTOR,
      '--provider',
      'scripted',
      '--script',
      TUTOR_SCRIPT,
      '-n',
      '3',
      '-t',
      '8',
      '--seed',
      '3',
    ]);
    expect(result.code).toBe(0);
    const progress = result.stderr.split('\n').filter((line) => line.startsWith('conversation '));
    expect(progress).toHaveLength(3);
    for (const line of progress) expect(line).toContain('ended by the simulated user');
  });
});
