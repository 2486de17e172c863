/**
 * AutoGPT's code commands driven through `meta-agent run`: evaluate_code, improve_code and write_tests
 * each ask the model to play a function (AutoGPT's `call_ai_function`), and the goal loop saves what
 * it answers. The loopback server plays the model both in the loop and when those commands ask it.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { OpenAIServer } from '../support/openai-server.js';
import { startReplayServer, type ReplayStep } from '../support/replay-server.js';
import { runCli } from '../support/run-cli.js';

let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const CODE = 'function add(a, b) {\n  return a - b;\n}\n';
const SUGGESTIONS = ['add returns a - b: return a + b', 'document the parameters'];
const IMPROVED = '/** Adds a and b. */\nfunction add(a, b) {\n  return a + b;\n}\n';
const TESTS = "test('adds', () => expect(add(2, 3)).toBe(5));\n";

/** The result the prompt shows for the last `command`, as the loop handed it to the model. */
function lastResult(prompt: string, command: string): string {
  const at = prompt.lastIndexOf(`Command ${command} returned`);
  if (at < 0) throw new Error(`the prompt shows no result of ${command}`);
  return /returned[^:]*:\n([\s\S]*?)(?:\n\n(?:\{|Determine)|$)/.exec(prompt.slice(at))![1]!;
}

/** The model asked to play a function: it reads the signature and the code it was given. */
function playFunction(question: string): string {
  if (!question.includes(CODE.trim())) return 'I was not given the code.';
  if (question.includes('def analyze_code(code: str) -> list[str]:')) return JSON.stringify(SUGGESTIONS);
  if (question.includes('def generate_improved_code(') && question.includes(JSON.stringify(SUGGESTIONS)))
    return IMPROVED;
  if (question.includes('def create_test_cases(') && question.includes('["addition"]')) return TESTS;
  return 'I cannot tell which function I am.';
}

const STEPS: ReplayStep[] = [
  { name: 'evaluate_code', args: { code: CODE } },
  (prompt) => ({
    name: 'improve_code',
    args: { suggestions: JSON.parse(lastResult(prompt, 'evaluate_code')) as string[], code: CODE },
  }),
  (prompt) => ({ name: 'write_to_file', args: { file: 'add.js', text: lastResult(prompt, 'improve_code') } }),
  { name: 'write_tests', args: { code: CODE, focus: ['addition'] } },
  (prompt) => ({
    name: 'write_to_file',
    args: { file: 'add.test.js', text: lastResult(prompt, 'write_tests') },
  }),
  { name: 'task_complete', args: { reason: 'improved and tested' } },
];

describe('meta-agent run: evaluate_code, improve_code, write_tests', () => {
  it('the model reviews, improves and tests the code, and the run saves what it answered', async () => {
    server = await startReplayServer(STEPS, 'json', { aside: playFunction });
    const root = await mkdtemp(join(tmpdir(), 'run-review-'));
    const result = await runCli([
      'run',
      ...['--goal', 'review add.js, fix it and write its tests', '--yes', '--no-memory', '--json'],
      ...['--workspace', root, '--base-url', server.url, '--model', 'gpt-4o-mini'],
    ]);
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.code).toBe(0);
    expect(await readFile(join(root, 'add.js'), 'utf8')).toBe(IMPROVED.trim());
    expect(await readFile(join(root, 'add.test.js'), 'utf8')).toBe(TESTS.trim());

    const asked = server
      .chatRequests()
      .filter((body) => body.messages.every((message) => message.role === 'user'))
      .map((body) => body.messages[0]!.content);
    expect(asked).toHaveLength(3);
    expect(asked[0]).toBe(
      'You are now the following python function: ```# Analyzes the given code and returns a list of ' +
        'suggestions for improvements.\ndef analyze_code(code: str) -> list[str]:```\n\n' +
        `Only respond with your \`return\` value.\n\n${CODE}`,
    );
    expect(asked[2]).toContain(`${CODE}, ["addition"]`);

    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; purpose?: string });
    const purposes = events.filter((event) => event.type === 'model.call').map((event) => event.purpose);
    expect(purposes).toEqual(expect.arrayContaining(['evaluate_code', 'improve_code', 'write_tests']));
  });

  it('offers all three, and execute_javascript for running JavaScript', async () => {
    server = await startReplayServer([{ name: 'task_complete', args: { reason: 'looked' } }], 'tools');
    const root = await mkdtemp(join(tmpdir(), 'run-review-'));
    const result = await runCli([
      'run',
      ...['--goal', 'look', '--yes', '--no-memory'],
      ...['--workspace', root, '--base-url', server.url, '--model', 'gpt-4o-mini'],
    ]);
    expect(result.code).toBe(0);
    const offered = server.chatRequests()[0]!.tools!.map((tool) => tool.function.name);
    expect(offered).toEqual(
      expect.arrayContaining(['evaluate_code', 'improve_code', 'write_tests', 'execute_javascript']),
    );
    const system = server.chatRequests()[0]!.messages[0]!.content;
    expect(system).toContain(
      '"improve_code", args: "suggestions": "<list_of_suggestions>", "code": "<full_code_string>"',
    );
    expect(system).toContain(
      '"write_tests", args: "code": "<full_code_string>", "focus": "<list_of_focus_areas>"',
    );
  });
});
