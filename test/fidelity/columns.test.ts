/** Every column AutoGRAMS 0.1 reads changes behaviour here too; the ones it never reads pass quietly. */
import { describe, expect, it } from 'vitest';
import { Interpreter } from '../../src/engine/interpreter.js';
import { graphFromCsv } from '../../src/graph/csv.js';
import { labelLogitBias } from '../../src/llm/tokens.js';
import { converse, csvGraph, graphOf, promptsOf, recordingModels, simulate } from '../support/agents.js';

describe('AutoGRAMS spreadsheet columns', () => {
  it("Question Prompt opens the node's classifier question instead of the default (autograms/nodes/base_node.py:197-200, 389)", async () => {
    // As the AutoGRAMS recruiter example frames its salary question.
    const csv = `Name,Action,Instruction,Transitions,Question Prompt,Transition Question,Transition Choice A,Transition Choice B
ask,chat_exact,What salary do you expect?,"range,avoid",We are trying to determine the user's intent.,Which of the following is true?,the user named a number,the user avoided the question
range,chat_exact,Thanks.,range,,,,
avoid,chat_exact,No problem.,avoid,,,,
`;
    const { said, calls } = await converse(csvGraph(csv), { rules: [{ role: 'classifier', reply: 'B' }] }, [
      undefined,
      'Let us talk about it later.',
    ]);
    expect(said[1]).toBe('No problem.');
    const [prompt] = promptsOf(calls, 'classifier');
    expect(prompt).toMatch(/^We are trying to determine the user's intent\.\n\n/);
    expect(prompt).not.toContain('I need you to solve a multiple choice question.');
  });

  it('Conv Scope shows a node only the past turns of its category (autograms/nodes/base_node.py:598-601, chat_nodes.py:72)', async () => {
    const csv = `Name,Action,Instruction,Transitions,State Category,Conv Scope
a,chat,Talk about cats.,b,cats,
b,chat,Talk about dogs.,c,dogs,
c,chat,Sum up the dogs.,c,,dogs
`;
    const { calls } = await converse(
      csvGraph(csv),
      {
        rules: [
          { role: 'chatbot', match: "/Talk about cats\\.\\nAgent's reply:$/", reply: 'Cats purr.' },
          { role: 'chatbot', match: "/Talk about dogs\\.\\nAgent's reply:$/", reply: 'Dogs bark.' },
          { role: 'chatbot', reply: 'Dogs bark a lot.' },
        ],
      },
      [undefined, 'and dogs?', 'so?'],
    );
    const last = promptsOf(calls, 'chatbot').at(-1)!;
    expect(last).toContain('Dogs bark.');
    expect(last).not.toContain('Cats purr.');
  });

  it('Example Interjection comes before the question prompt of the interjection question (autograms/autogram_utils.py:247-254)', async () => {
    const csv = `Name,Action,Instruction,Transitions,Condition Interjection,Example Interjection
talk,chat_exact,What shall we talk about?,talk,,
topic,chat_exact,Sure - pick a topic.,talk,The user wants to change the topic.,User: can we talk about something else
`;
    const { said, calls } = await converse(csvGraph(csv), { rules: [{ role: 'classifier', reply: 'A' }] }, [
      undefined,
      "I'm bored",
    ]);
    expect(said[1]).toBe('Sure - pick a topic.');
    const [prompt] = promptsOf(calls, 'classifier');
    expect(prompt).toMatch(
      /^User: can we talk about something else\n\nI need you to solve a multiple choice question\.\n\n/,
    );
    expect(prompt).toContain(
      'Which of the following is True?\nA. The user wants to change the topic.\nB. None of the above.',
    );
  });

  it('makes interjections less likely than "None of the above" by the down-weight (autograms/autogram_utils.py:271-273, models/openai_classifier.py:507-516)', async () => {
    const graph = graphOf([
      { name: 'talk', action: 'chat_exact', instruction: 'Hi.', transitions: ['talk'] },
      {
        name: 'stop',
        action: 'chat_exact',
        instruction: 'Bye.',
        conditionInterjection: 'The user is leaving.',
        transitions: ['talk'],
      },
    ]);
    const { models, calls } = recordingModels({ rules: [{ role: 'classifier', reply: 'B' }] }, 'gpt-4o-mini');
    const agent = await Interpreter.create({ graph, models });
    try {
      const first = await agent.reply(undefined);
      await agent.reply('hello', first.state);
    } finally {
      agent.dispose();
    }
    const labels = calls.find((c) => c.role === 'classifier')!.request.answerLabels!;
    expect(labels).toEqual([
      { text: 'A', bias: 99 },
      { text: 'B', bias: 100 },
    ]);
    // In gpt-4o-mini's tokenizer "A" is 32 and "B" is 33; each is also pushed with a leading space.
    const bias = labelLogitBias('gpt-4o-mini', labels)!;
    expect(bias['32']).toBe(99);
    expect(bias['33']).toBe(100);
  });

  it('Required Revisit skips a function call until the listed nodes ran again (autograms/nodes/function_nodes.py:39, 114-124; autogram_utils.py:449-479)', async () => {
    const csv = `Name,Action,Instruction,Transitions,Required Revisit
menu,chat_exact,Say anything.,fetch,
fetch,function,news = headline(),show,menu
show,chat_exact,News: $news,refresh,
refresh,chat_exact,Again?,fetch,
headline(),thought_exact,Rain expected.,return,
`;
    // fetch needs menu to have run since fetch last did: the second time it has not, so no call is
    // made and news keeps its value (AutoGRAMS sets it to None, and then $news fails).
    const { said, events } = await converse(csvGraph(csv), { rules: [] }, [undefined, 'go', 'again', 'go']);
    expect(said).toEqual(['Say anything.', 'News: Rain expected.', 'Again?', 'News: Rain expected.']);
    expect(events.filter((e) => e.type === 'transition' && e.kind === 'function-call')).toHaveLength(1);
  });

  it('weight lists choose the member of a p.* group without conditions (autograms/autogram_utils.py:386-438)', async () => {
    const csv = `Name,Action,Instruction,Transitions,Prerequisite States,Blocking States,Down Weight States
greet,chat_exact,Hello.,tip.*,,,
tip.a,chat_exact,First tip.,tip.*,,tip.a,
tip.b,chat_exact,Second tip.,tip.*,tip.a,,tip.b
tip.c,chat_exact,Last tip.,tip.*,tip.b,,
`;
    // tip.a is blocked once it ran; tip.b needs tip.a and loses a point per earlier visit of its own.
    const { said } = await converse(csvGraph(csv), { rules: [] }, [undefined, 'more', 'more', 'more']);
    expect(said).toEqual(['Hello.', 'First tip.', 'Second tip.', 'Last tip.']);
  });

  it('reads the columns AutoGRAMS stores but never reads without a word (autograms/nodes/base_node.py:142, 260)', () => {
    const csv =
      'Name,Action,Instruction,Transitions,Instruction Short,Conv Context,Lineno,Def Type\na,chat,Hi,a,hi,x,3,statement\n';
    expect(graphFromCsv(csv, { name: 'a', source: 'a.csv' }).warnings).toEqual([]);
  });

  it("Transition Probs weight the simulated user's choice of transition (autograms/nodes/base_node.py:165-194, 449-461)", async () => {
    const csv = `Name,Action,Instruction,Transitions,Transition Question,Transition Choice A,Transition Choice B,User Instruction Transition A,User Instruction Transition B,Transition Probs
ask,chat_exact,Tea or coffee?,"tea,coffee",Which did the user pick?,tea,coffee,ask for tea,ask for coffee,"0, 1"
tea,chat_exact,Tea it is.,ask,,,,say thanks,,
coffee,chat_exact,Coffee it is.,ask,,,,say thanks,,
`;
    const { report } = await simulate(
      csvGraph(csv),
      {
        rules: [
          { role: 'userbot', match: 'ask for coffee', reply: 'Coffee, please.' },
          { role: 'userbot', reply: 'Thanks.' },
          { role: 'classifier', reply: 'B' },
        ],
      },
      { count: 4, turns: 2, seed: 3 },
    );
    const sampled = report.conversations.flatMap((c) =>
      c.turns.filter((t) => t.node === 'ask').map((t) => t.sampled),
    );
    expect(sampled).toEqual([1, 1, 1, 1]);
  });
});
