import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseAnswer, parseToolCall } from '../../src/autonomous/answer.js';
import { defineCommand } from '../../tools/command.js';
import { CommandRegistry } from '../../tools/registry.js';

const registry = new CommandRegistry([
  defineCommand({
    name: 'write_to_file',
    title: 'Write to file',
    description: 'Writes a file of the workspace.',
    args: z.object({ file: z.string(), text: z.string() }),
    effect: 'write',
    needs: [],
    run: async () => 'written',
  }),
  defineCommand({
    name: 'do_nothing',
    title: 'Do Nothing',
    description: 'Does nothing.',
    args: z.object({}),
    effect: 'none',
    needs: [],
    run: async () => 'nothing done',
  }),
  defineCommand({
    name: 'task_complete',
    title: 'Task Complete (Shutdown)',
    description: 'Ends the run.',
    args: z.object({ reason: z.string() }),
    effect: 'none',
    needs: [],
    run: async ({ reason }) => ({ output: 'done', complete: reason }),
  }),
]);

const thoughts = {
  text: 'I should save the notes.',
  reasoning: 'Files outlast my short memory.',
  plan: '- write notes\n- finish',
  criticism: 'Be brief.',
  speak: 'Saving the notes.',
};

function answer(command: unknown, withThoughts: unknown = thoughts): string {
  return JSON.stringify({ thoughts: withThoughts, command }, null, 2);
}

const write = { name: 'write_to_file', args: { file: 'notes.txt', text: 'hello' } };

function problemOf(text: string): string {
  const parsed = parseAnswer(text, registry);
  if (parsed.ok) throw new Error(`expected a problem, got ${JSON.stringify(parsed.command)}`);
  return parsed.problem;
}

describe('parseAnswer: usable answers', () => {
  it('reads the thoughts and the command of an answer in the response format', () => {
    expect(parseAnswer(answer(write), registry)).toEqual({ ok: true, thoughts, command: write });
  });

  it('reads the JSON inside a code fence with prose around it', () => {
    const text = `Sure! Here is my next step:\n\n\`\`\`json\n${answer(write)}\n\`\`\`\nLet me know.`;
    expect(parseAnswer(text, registry)).toMatchObject({ ok: true, command: write });
  });

  it('takes the last JSON block when the answer quotes an earlier one', () => {
    const earlier = answer({ name: 'do_nothing', args: {} });
    const text = `Last time I answered:\n${earlier}\nThis time:\n${answer(write)}`;
    expect(parseAnswer(text, registry)).toMatchObject({ ok: true, command: write });
  });

  it('prefers the answer over a small object quoted in the prose after it', () => {
    const text = `${answer(write)}\nThe file will then hold {"greeting": "hello"}.`;
    expect(parseAnswer(text, registry)).toMatchObject({ ok: true, command: write });
  });

  it('does not count braces and escaped quotes inside strings', () => {
    const tricky = { name: 'write_to_file', args: { file: 'a.js', text: 'if (x) { say("}\\"{"); }' } };
    expect(parseAnswer(answer(tricky), registry)).toMatchObject({ ok: true, command: tricky });
  });

  it('does not choose a command that the thoughts quote', () => {
    const quoting = { ...thoughts, text: 'Not {"command": {"name": "do_nothing", "args": {}}} this time.' };
    const parsed = parseAnswer(answer(write, quoting), registry);
    expect(parsed).toMatchObject({ ok: true, command: write, thoughts: { text: quoting.text } });
  });

  it('ignores a stray brace in the prose', () => {
    expect(parseAnswer(`${answer(write)}\nThat is all :-{`, registry)).toMatchObject({ ok: true });
  });

  it('finds the answer after an unclosed brace in the prose before it', () => {
    expect(parseAnswer(`Between { and the answer:\n${answer(write)}`, registry)).toMatchObject({
      ok: true,
      command: write,
    });
  });

  it('treats missing args as no arguments', () => {
    expect(parseAnswer(answer({ name: 'do_nothing' }), registry)).toMatchObject({
      ok: true,
      command: { name: 'do_nothing', args: {} },
    });
  });

  it('repairs trailing commas and raw newlines inside strings', () => {
    const text =
      '{"thoughts": {"text": "ok",}, "command": {"name": "write_to_file", "args": {"file": "a.txt", "text": "line 1\nline 2",},},}';
    expect(parseAnswer(text, registry)).toMatchObject({
      ok: true,
      command: { name: 'write_to_file', args: { file: 'a.txt', text: 'line 1\nline 2' } },
    });
  });

  it('normalizes thoughts: absent fields empty, a plan list as "- " lines, other values as text', () => {
    const parsed = parseAnswer(
      answer(write, { text: 'go', plan: ['write notes', '- finish'], criticism: 42 }),
      registry,
    );
    expect(parsed).toMatchObject({
      ok: true,
      thoughts: { text: 'go', reasoning: '', plan: '- write notes\n- finish', criticism: '42', speak: '' },
    });
  });

  it('reads thoughts sent as one string as their text', () => {
    expect(parseAnswer(answer(write, 'Just writing.'), registry)).toMatchObject({
      ok: true,
      thoughts: { text: 'Just writing.', plan: '' },
    });
  });
});

describe('parseAnswer: unusable answers', () => {
  it('asks for the JSON format when the answer has no JSON', () => {
    expect(problemOf('I will write the notes now.')).toMatch(/no JSON object.*Reply with only the JSON/);
  });

  it('says a truncated answer was cut off and asks for a shorter one, keeping the thoughts that closed', () => {
    const full = answer({ name: 'write_to_file', args: { file: 'a.txt', text: 'a very long text' } });
    const parsed = parseAnswer(full.slice(0, full.indexOf('very')), registry);
    expect(parsed).toEqual({
      ok: false,
      problem: expect.stringMatching(/cut off.*shorter, complete JSON/),
      thoughts,
    });
  });

  it('says an answer cut off after an earlier quoted block was cut off', () => {
    const text = `${answer(write)}\nCorrection:\n{"thoughts": {"text": "I will`;
    expect(problemOf(text)).toMatch(/cut off/);
  });

  it('reports invalid JSON that no safe repair fixes', () => {
    expect(problemOf("{'thoughts': {}, 'command': {'name': 'do_nothing'}}")).toMatch(
      /not valid: .*JSON.*double-quoted keys and strings/,
    );
  });

  it('reports an answer without a command, with its thoughts', () => {
    const parsed = parseAnswer(JSON.stringify({ thoughts }), registry);
    expect(parsed).toEqual({ ok: false, problem: expect.stringContaining('no "command"'), thoughts });
  });

  it('reports a command that is not an object, or has no string name', () => {
    expect(problemOf(answer('write_to_file'))).toBe(
      '"command" must be an object {"name": …, "args": {…}}, not "write_to_file".',
    );
    expect(problemOf(answer({ name: 7 }))).toMatch(/"command.name" must be a string .*, not 7\./);
    expect(problemOf(answer({ args: {} }))).toMatch(/"command" has no "name"/);
  });

  it('says the model copied the template when it echoes the command placeholder', () => {
    expect(problemOf(answer({ name: 'command name', args: { 'arg name': 'value' } }))).toMatch(
      /placeholder "command name".*real values/,
    );
  });

  it('says the model copied the template when it echoes the argument placeholder', () => {
    expect(problemOf(answer({ name: 'write_to_file', args: { 'arg name': 'value' } }))).toMatch(
      /placeholder "arg name"/,
    );
  });

  it("says the model copied the command list's argument placeholder", () => {
    expect(problemOf(answer({ name: 'write_to_file', args: { file: '<file>', text: 'hi' } }))).toBe(
      'The argument "file" of write_to_file is the placeholder "<file>" from the command list. Fill in a real value.',
    );
  });

  it('says the model copied the template thoughts', () => {
    const template = { ...thoughts, text: 'thought', reasoning: 'reasoning' };
    expect(problemOf(answer(write, template))).toMatch(/thoughts copy .*placeholder \(text: "thought"\)/);
  });

  it('names an unknown command, the closest known one and the list', () => {
    expect(problemOf(answer({ name: 'write_file', args: {} }))).toBe(
      'There is no command "write_file". Did you mean "write_to_file"? The commands are: write_to_file, do_nothing, task_complete.',
    );
  });

  it('suggests the command whose title the model used as its name', () => {
    expect(problemOf(answer({ name: 'Task Complete (Shutdown)', args: {} }))).toMatch(
      /Did you mean "task_complete"/,
    );
  });

  it('names an unknown command without a suggestion when nothing is close', () => {
    expect(problemOf(answer({ name: 'google', args: {} }))).toBe(
      'There is no command "google". The commands are: write_to_file, do_nothing, task_complete.',
    );
  });

  it('reports wrong argument names with the usage', () => {
    const problem = problemOf(answer({ name: 'write_to_file', args: { filename: 'a', text: 'b' } }));
    expect(problem).toContain('"filename" is not an argument of write_to_file');
    expect(problem).toContain('Usage: write_to_file {"file": string, "text": string}');
  });

  it('reports wrong argument types with the usage', () => {
    const problem = problemOf(answer({ name: 'task_complete', args: { reason: 3 } }));
    expect(problem).toMatch(/"reason": .*string.*Usage: task_complete \{"reason": string\}/);
  });

  it('shortens quoted model text to about 80 characters', () => {
    const problem = problemOf(answer({ name: 'x'.repeat(500), args: {} }));
    expect(problem).toContain(`"${'x'.repeat(79)}…"`);
    expect(problem.length).toBeLessThan(200);
  });
});

describe('parseToolCall', () => {
  const call = (name: string, args: string) => ({ id: 'call_1', name, arguments: args });

  it('reads a tool call and takes the content as the thoughts text', () => {
    expect(
      parseToolCall(
        call('write_to_file', '{"file": "notes.txt", "text": "hello"}'),
        '  Saving notes.\n',
        registry,
      ),
    ).toEqual({
      ok: true,
      thoughts: { text: 'Saving notes.', reasoning: '', plan: '', criticism: '', speak: '' },
      command: write,
    });
  });

  it('reads thoughts JSON in the content, with prose around it', () => {
    const content = `My thoughts:\n${JSON.stringify({ thoughts })}`;
    expect(parseToolCall(call('do_nothing', '{}'), content, registry)).toEqual({
      ok: true,
      thoughts,
      command: { name: 'do_nothing', args: {} },
    });
  });

  it('treats empty arguments as none', () => {
    expect(parseToolCall(call('do_nothing', ''), '', registry)).toMatchObject({ ok: true });
  });

  it('reports arguments that are not JSON, keeping the thoughts', () => {
    const parsed = parseToolCall(call('write_to_file', '{"file": "a.txt", '), 'Writing.', registry);
    expect(parsed).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/^The arguments of your call to "write_to_file" are not valid JSON: /),
      thoughts: { text: 'Writing.' },
    });
  });

  it('names an unknown tool with a suggestion', () => {
    expect(parseToolCall(call('do_nothin', '{}'), '', registry)).toMatchObject({
      ok: false,
      problem: expect.stringContaining('There is no command "do_nothin". Did you mean "do_nothing"?'),
    });
  });

  it('reports wrong arguments of a tool', () => {
    expect(parseToolCall(call('task_complete', '{"why": "done"}'), '', registry)).toMatchObject({
      ok: false,
      problem: expect.stringContaining('"why" is not an argument of task_complete'),
    });
  });
});
