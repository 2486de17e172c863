/** `$var` everywhere AutoGRAMS substitutes it, and conditional text `?{ … }`. */
import { describe, expect, it } from 'vitest';
import { embedInCode, renderText } from '../../src/engine/template.js';
import { converse, csvGraph, promptsOf } from '../support/agents.js';

const where = { node: 'n', field: 'instruction' };

describe('$var embedding', () => {
  it("embeds variables into code as text: s2='$s1' + 'x' gives hellox (autograms/nodes/python_nodes.py:51-54, 69)", async () => {
    const graph = csvGraph(`Name,Action,Instruction,Transitions
set,python_function,s1='hello',join
join,python_function,s2='$s1' + 'x',say
say,chat_exact,$s2,say
`);
    const { said, state } = await converse(graph, { rules: [] }, [undefined]);
    expect(said[0]).toBe('hellox');
    expect(state.stack[0]!.variables.s2).toBe('hellox');
  });

  it('leaves a $name in code alone when no variable has that name, since $ also starts JavaScript names', () => {
    expect(embedInCode("const $el = 1; s = '$s1' + $n + '\\$n'", { s1: 'hi', n: 2 })).toBe(
      "const $el = 1; s = 'hi' + 2 + '\\$n'",
    );
  });

  it("embeds variables into a function call's arguments before reading them: y = f($x) (autograms/nodes/function_nodes.py:103-104; autogram_utils.py:853-882)", async () => {
    const graph = csvGraph(`Name,Action,Instruction,Transitions
read,thought_exact,"numbers = [3, 1, 2]",low
low,local_function,lowest = smallest($numbers),pair
pair,python_function,"both = '4, 5'",add
add,local_function,sum = plus($both),say
say,chat_exact,$lowest and $sum,say
smallest(items),python_function,min(items),return
"plus(a, b)",python_function,a + b,return
`);
    // `$numbers` is the text "[3, 1, 2]", read as a list; `$both` becomes two arguments.
    const { said } = await converse(graph, { rules: [] }, [undefined]);
    expect(said[0]).toBe('1 and 9');
  });

  it('embeds variables into a transition question (autograms/nodes/base_node.py:886-890)', async () => {
    const graph =
      csvGraph(`Name,Action,Instruction,Transitions,Transition Question,Transition Choice A,Transition Choice B
set,thought_exact,"range = 150k-180k",ask,,,
ask,chat_exact,What salary do you expect?,"ok,high",Is the user okay with $range or less?,yes,no
ok,chat_exact,Great.,ok,,,
high,chat_exact,Sorry.,high,,,
`);
    const { calls } = await converse(graph, { rules: [{ role: 'classifier', reply: 'Yes' }] }, [
      undefined,
      '160k',
    ]);
    expect(promptsOf(calls, 'classifier')[0]).toContain('Is the user okay with 150k-180k or less?');
  });
});

describe('conditional text ?{ … } (autograms/autogram_utils.py:590-654)', () => {
  it('appears with its variables embedded only when all of them are defined', () => {
    const text = 'Greet the user.?{ Their name is $name.} ?{Mood: $mood.}';
    expect(renderText(text, {}, where)).toEqual({ text: 'Greet the user. ', shownConditional: false });
    expect(renderText(text, { name: 'Ada', mood: null }, where)).toEqual({
      text: 'Greet the user. Their name is Ada. ',
      shownConditional: true,
    });
  });

  it('reads \\?{ and \\} in the text as literal text, embeds values as they are, and a $var outside conditional text must be defined', () => {
    expect(renderText('Reply in JSON: \\?{"a": 1\\}', {}, where).text).toBe('Reply in JSON: ?{"a": 1}');
    expect(renderText('Path: $path', { path: 'C:\\?{x\\}' }, where).text).toBe('Path: C:\\?{x\\}');
    expect(() => renderText('Hi $name', {}, where)).toThrow(
      /uses \$name, but no variable "name" is in scope/,
    );
  });

  it('shows in a conversation once the variable is set', async () => {
    const graph = csvGraph(`Name,Action,Instruction,Transitions
greet,chat_exact,Hello?{ $name}!,learn
learn,python_function,name = 'Ada',greet
`);
    const { said } = await converse(graph, { rules: [] }, [undefined, 'I am Ada']);
    expect(said).toEqual(['Hello!', 'Hello Ada!']);
  });

  it('keeps a chat instruction whose conditional text was shown in later prompts, though a user reply came before it (autograms/nodes/chat_nodes.py:60-63, autogram_utils.py:657-699)', async () => {
    const graph = csvGraph(`Name,Action,Instruction,Transitions
open,chat_exact,Hi!,name
name,python_function,name = 'Ada',greet
greet,chat,Greet the user.?{ Call them $name.},greet
`);
    const { calls } = await converse(graph, { rules: [{ role: 'chatbot', reply: 'Hello Ada.' }] }, [
      undefined,
      'hello',
      'thanks',
    ]);
    expect(promptsOf(calls, 'chatbot').at(-1)).toContain(
      "User: hello\n\nInstruction for Agent: Greet the user. Call them Ada.\nAgent's reply:\n\nHello Ada.",
    );
  });
});
