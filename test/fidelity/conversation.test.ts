/** How a conversation moves and what the user is shown, as in AutoGRAMS 0.1. */
import { describe, expect, it } from 'vitest';
import { stripSpeakerLabel } from '../../src/engine/reply-text.js';
import { lintGraph } from '../../src/aipl/lint.js';
import { converse, csvGraph, promptsOf } from '../support/agents.js';

describe('replies', () => {
  it('never shows the user an echoed speaker label, but keeps text that merely starts with a word and a colon (autograms/autogram_utils.py:71-76 cuts at any colon; we do not)', async () => {
    const graph = csvGraph(`Name,Action,Instruction,Transitions
talk,chat,Answer the user.,talk
`);
    const { said } = await converse(
      graph,
      {
        rules: [
          {
            role: 'chatbot',
            reply: [
              "Agent's reply: We open at nine.",
              '**Agent:** Yes, on Sundays too.',
              'Note: the meeting moved to Tuesday.',
            ],
          },
        ],
      },
      [undefined, 'When?', 'Sundays?'],
    );
    expect(said).toEqual(['We open at nine.', 'Yes, on Sundays too.', 'Note: the meeting moved to Tuesday.']);
    expect(stripSpeakerLabel('Tutor: Hi', ["Tutor's reply:", 'Tutor'])).toBe('Hi');
  });
});

describe('interjections inside function calls (autograms/nodes/chat_nodes.py:12-46, autogram_utils.py:333-342)', () => {
  // AutoGRAMS asks the interjection question after every chat node, inside functions too; the
  // interjection node then runs in the function's frame, and its `return` returns to the caller.
  const graph = csvGraph(`Name,Action,Instruction,Transitions,Condition Interjection
begin,chat_exact,Let us begin.,call,
call,function,answer = ask_name(),thanks,
ask_name(),chat_exact,What is your name?,return,
thanks,chat_exact,Thanks: $answer,thanks,
help,chat_exact,You can tell me any name.,return,The user asks for help.
`);

  it('jumps to the interjection node from inside a function and returns to its caller from there', async () => {
    const { said, state } = await converse(
      graph,
      { rules: [{ role: 'classifier', reply: ['B', 'A', 'B'] }] },
      [undefined, 'ok', 'what do you need?', 'I see'],
    );
    expect(said).toEqual([
      'Let us begin.',
      'What is your name?',
      'You can tell me any name.',
      'Thanks: You can tell me any name.',
    ]);
    expect(state.stack).toHaveLength(1);
  });

  it('lints the interjection node that returns without an error', () => {
    expect(lintGraph(graph.file).filter((f) => f.severity === 'error')).toEqual([]);
  });
});

describe('wildcard groups (autograms/autogram_utils.py:371-438)', () => {
  it('tries the members in order when the first has a boolean condition, the last being the else', async () => {
    const graph = csvGraph(`Name,Action,Instruction,Transitions,Boolean Condition
count,python_function,n = 3,size.*,
size.a,chat_exact,Small.,size.a,n < 2
size.b,chat_exact,Medium.,size.b,n < 5
size.c,chat_exact,Large.,size.c,
`);
    const { said } = await converse(graph, { rules: [] }, [undefined]);
    expect(said).toEqual(['Medium.']);
  });

  it('takes the first member of a group without conditions or weights, instead of refusing to load', async () => {
    const graph = csvGraph(`Name,Action,Instruction,Transitions
start,chat_exact,Hello.,pick.*
pick.a,chat_exact,First.,pick.*
pick.b,chat_exact,Second.,pick.*
`);
    expect(lintGraph(graph.file).filter((f) => f.severity === 'error')).toEqual([]);
    const { said } = await converse(graph, { rules: [] }, [undefined, 'next', 'next']);
    expect(said).toEqual(['Hello.', 'First.', 'First.']);
  });
});

describe('classifier prompts', () => {
  it('asks yes/no questions with Yes and No whatever the order of the choices (autograms/nodes/base_node.py:414-430)', async () => {
    const graph =
      csvGraph(`Name,Action,Instruction,Transitions,Transition Question,Transition Choice A,Transition Choice B
ask,chat_exact,Need more help?,"bye,ask",Is the user done?,no,yes
bye,chat_exact,Bye.,bye,,,
`);
    const { said, calls } = await converse(graph, { rules: [{ role: 'classifier', reply: 'Yes' }] }, [
      undefined,
      'all done',
    ]);
    expect(said[1]).toBe('Need more help?');
    expect(promptsOf(calls, 'classifier')[0]).toMatch(/Is the user done\?\nAnswer Yes or No only\.$/);
  });

  it('asks "Yes." and "No." by letter: only choices that are yes and no exactly, whatever their case, are asked as Yes or No (autograms/nodes/base_node.py:403)', async () => {
    const graph =
      csvGraph(`Name,Action,Instruction,Transitions,Transition Question,Transition Choice A,Transition Choice B
ask,chat_exact,Need more help?,"more,sure",Is the user done?,No.,Yes.
more,chat_exact,What else?,sure,,,
sure,chat_exact,Sure?,"bye,ask",Is the user sure?,YES,no
bye,chat_exact,Bye.,bye,,,
`);
    const { said, calls } = await converse(graph, { rules: [{ role: 'classifier', reply: ['B', 'Yes'] }] }, [
      undefined,
      'all done',
      'yes',
    ]);
    expect(said).toEqual(['Need more help?', 'Sure?', 'Bye.']);
    const [lettered, yesNo] = promptsOf(calls, 'classifier');
    expect(lettered).toMatch(/Is the user done\?\nA\. No\.\nB\. Yes\.\nAnswer with the letter only\.$/);
    expect(yesNo).toMatch(/Is the user sure\?\nAnswer Yes or No only\.$/);
  });
});
