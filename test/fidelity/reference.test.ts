/**
 * Differential test against AutoGRAMS 0.1 itself: the same spreadsheet, the same scripted model answers
 * and the same user replies, run by the reference (Python, through reference/driver.py with a stand-in
 * `openai` module answering from the same rules file) and by meta-agent. The two must say the same
 * things, go through the same nodes, and make the same model calls with the same prompts. A spreadsheet
 * AutoGRAMS refuses (loading it, or on reaching the node) meta-agent's linter refuses when it loads.
 *
 * "The same" allows for what the README lists as deliberate: whitespace (AutoGRAMS joins some parts
 * with four newlines, we with two); the line that ends a classifier question (ours says "Answer with the
 * letter only.", AutoGRAMS adds "(Yes or No)" to yes/no questions); the spelling of chat_suffix's
 * instruction (AutoGRAMS' node writes "repsonse" where its config says "response"); and the path's
 * bookkeeping (AutoGRAMS names a callable node `f()` and visits a function node again on return).
 *
 * It needs the reference source (`../shared/reference/autograms-243158a`, or AUTOGRAMS_REFERENCE) and a
 * python3 with numpy and pandas (Debian's python3-numpy and python3-pandas; `.ci/run` installs them when
 * the reference is there); without them it is skipped, saying why.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lintGraph } from '../../src/aipl/lint.js';
import { isCallAction } from '../../src/graph/parse.js';
import type { GraphConfig } from '../../src/graph/schema.js';
import { StaticGraph } from '../../src/graph/view.js';
import type { ScriptFile } from '../../src/llm/scripted.js';
import type { ChatMessage } from '../../src/llm/types.js';
import { converse, csvGraph, type RecordedCall } from '../support/agents.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DRIVER = fileURLToPath(new URL('./reference/driver.py', import.meta.url));
const FIXTURES = join(ROOT, 'test/fixtures/graphs');

const reference = process.env.AUTOGRAMS_REFERENCE ?? resolve(ROOT, '../shared/reference/autograms-243158a');
const python = ['/usr/bin/python3', 'python3'].find(
  (command) => spawnSync(command, ['-c', 'import numpy, pandas'], { stdio: 'ignore' }).status === 0,
);
const missing = !existsSync(join(reference, 'autograms'))
  ? `the AutoGRAMS reference is not at ${reference} (set AUTOGRAMS_REFERENCE)`
  : !python
    ? 'no python3 with numpy and pandas (apt-get install python3-numpy python3-pandas)'
    : undefined;

/** A conversation to run on both sides: a spreadsheet (a fixture's name or the text itself), answers, replies. */
interface Scenario {
  name: string;
  csv: { fixture: string } | { text: string };
  script: ScriptFile;
  /** The user's replies; the first, '', lets the agent speak first. */
  replies: string[];
  /** What the agent says, one line per reply: the path the scenario means to take. */
  said: string[];
  /** Settings off the defaults: AutogramConfig's arguments, and the same in our graph config. */
  config?: { autograms: Record<string, unknown>; ours: Partial<GraphConfig> };
}

/** What the reference did, as driver.py reports it. */
interface ReferenceRun {
  replies: (string | null)[];
  calls: {
    role: 'chatbot' | 'classifier';
    messages: ChatMessage[];
    temperature: number;
    max_tokens: number;
  }[];
  trajectory: string[];
  error: string | null;
}

/** A spreadsheet with one of each construct both implementations run alike. */
const TOUR = `Name,Action,Instruction,Transitions,State Category,Conv Scope,Question Prompt,Transition Question,Transition Choice A,Transition Choice B,Boolean Condition,Condition Interjection,Example Interjection
start1,set_prompt,You are a friendly guide to a small town.,start2,,,,,,,,,
start2,python_function,visits = 1,greet,,,,,,,,,
greet,chat_exact,Welcome! Shall I tell you about the town?,"leave,tour",town,,,Does the user want to hear about the town?,no,yes,,,
tour,thought_qa,fact = What is one surprising fact about a small town?,tell,town,,,,,,,,
tell,chat,Tell the user this fact: $fact,ask_more,town,,,,,,,,
ask_more,chat_suffix,Would you like to hear about the food too?,"food,pick.*",food,,Read the user's last reply carefully.,Does the user want to hear about food?,yes,no,,,
food,thought,dish = Name one local dish. Reply with the dish only.,describe,food,,,,,,,,
describe,chat,Describe $dish in one sentence.?{ Mention that $dish is popular.},count,food,food,,,,,,,
count,local_function,visits = add_one($visits),pick.*,,,,,,,,,
add_one(n),python_function,m = n + 1,return m,,,,,,,,,
pick.a,chat_exact,You have been here $visits times.,pick.*,,,,,,,visits > 1,,
pick.b,chat_exact,Enjoy your stay.,pick.*,,,,,,,,,
leave,chat,Say goodbye warmly.,fin.*,,,,,,,,,
fin.a,chat_exact,Goodbye.,fin.*,,,,,,,,,
fin.b,chat_exact,See you.,fin.*,,,,,,,,,
lost,chat_exact,Let me help you find your way.,greet,,,,,,,,The user is lost.,User: where am I?
`;

/** The tour's model: the interjection never fires, and the chatbot answers by the instruction it ends with. */
function tourScript(yesNo: string[]): ScriptFile {
  const ending = (instruction: string) => `/${instruction}\\nAgent's reply:$/`;
  return {
    rules: [
      { role: 'classifier', match: 'Which of the following is True?', reply: 'B' },
      { role: 'classifier', reply: yesNo },
      {
        role: 'chatbot',
        match: ending('surprising fact about a small town\\?'),
        reply: 'Its clock runs backwards.',
      },
      {
        role: 'chatbot',
        match: ending('Its clock runs backwards\\.'),
        reply: 'Did you know our clock runs backwards?',
      },
      {
        role: 'chatbot',
        match: ending('fits the situation\\.'),
        reply: 'Lovely. **Would you like to hear about the food too?**',
      },
      { role: 'chatbot', match: ending('Reply with the dish only\\.'), reply: 'Apple pie' },
      {
        role: 'chatbot',
        match: ending('Mention that Apple pie is popular\\.'),
        reply: 'Apple pie is sweet and popular.',
      },
      { role: 'chatbot', match: ending('Say goodbye warmly\\.'), reply: 'Farewell, traveller.' },
    ],
  };
}

const SCENARIOS: Scenario[] = [
  {
    name: 'merge_sort_fn.csv: the list the thought writes down is sorted by its Python functions',
    csv: { fixture: 'merge_sort_fn.csv' },
    script: { rules: [{ role: 'chatbot', match: 'write down the list', reply: '[8,19,-2,14.5]' }] },
    replies: ['', '8,19,-2,14.5'],
    said: [
      'Hello, please provide me a comma separated list of numbers to sort',
      'The sorted list is [-2, 8, 14.5, 19]',
    ],
  },
  {
    name: 'simple_example.csv: the user wants to hear about AI',
    csv: { fixture: 'simple_example.csv' },
    script: {
      rules: [
        { role: 'classifier', reply: 'Yes' },
        { role: 'chatbot', reply: 'AutoGRAMS is out.' },
      ],
    },
    replies: ['', 'yes please', 'cool'],
    said: [
      'Would you like me to tell you more about  the latest advances in AI?',
      'AutoGRAMS is out.',
      'AutoGRAMS is out.',
    ],
  },
  {
    name: 'simple_example.csv: the user does not',
    csv: { fixture: 'simple_example.csv' },
    script: {
      rules: [
        { role: 'classifier', reply: 'No' },
        { role: 'chatbot', reply: 'What would you like?' },
      ],
    },
    replies: ['', 'no thanks', 'the weather'],
    said: [
      'Would you like me to tell you more about  the latest advances in AI?',
      'What would you like?',
      'What would you like?',
    ],
  },
  {
    name: 'fraction_agent.csv: prompts, yes/no questions, a question asked, the first unit',
    csv: { fixture: 'fraction_agent.csv' },
    script: {
      rules: [
        { role: 'classifier', reply: ['No', 'Yes', 'No', 'No', 'Yes', 'No'] },
        {
          role: 'chatbot',
          reply: [
            'Hi, I am your tutor.',
            'Ready to begin?',
            'A fraction is a part of a whole.',
            'The numerator counts the parts.',
            'To reduce a fraction, divide by a common factor.',
            'Ready to try one yourself?',
            'Reduce 4/8.',
          ],
        },
      ],
    },
    replies: ['', 'I know a little', 'ready', 'what is a part?', 'sounds good', 'ok', 'fine'],
    said: [
      'Hi, I am your tutor.',
      'Ready to begin?',
      'A fraction is a part of a whole.',
      'The numerator counts the parts.',
      'To reduce a fraction, divide by a common factor.',
      'Ready to try one yourself?',
      'Reduce 4/8.',
    ],
  },
  {
    name: 'documented_tutor.csv: a wrong answer, a hint, a right one, goodbye',
    csv: { fixture: 'documented_tutor.csv' },
    script: JSON.parse(readFileSync(join(FIXTURES, 'documented_tutor.script.json'), 'utf8')) as ScriptFile,
    replies: ['', 'yes', '67', 'I do not know', '68', 'no thanks'],
    said: [
      'Hi! I am your arithmetic tutor. Shall we practise?',
      'What is 23 + 45?',
      'Not quite - check the ones.',
      'Add the ones first.',
      'Well done! Another one?',
      'Goodbye!',
    ],
  },
  {
    name: 'documented_tutor.csv: two right answers, a harder problem, the chat_suffix level',
    csv: { fixture: 'documented_tutor.csv' },
    script: {
      rules: [
        { role: 'classifier', match: 'Which of the following is True?', reply: ['B', 'B', 'B', 'B', 'B'] },
        { role: 'classifier', match: 'What did the user do?', reply: 'A' },
        { role: 'classifier', reply: ['Yes', 'Yes', 'No'] },
        {
          role: 'chatbot',
          match: "/Reply with the problem only\\.\\nAgent's reply:$/",
          reply: ['What is 12 + 30?', 'What is 48 + 37?'],
        },
        { role: 'chatbot', match: "/Reply with the number only\\.\\nAgent's reply:$/", reply: ['42', '85'] },
        {
          role: 'chatbot',
          match: "/fits the situation\\.\\nAgent's reply:$/",
          reply: 'Two in a row. Shall we try a harder one',
        },
        { role: 'chatbot', match: "/say goodbye\\.\\nAgent's reply:$/", reply: 'Goodbye.' },
        { role: 'chatbot', reply: 'Well done.' },
      ],
    },
    replies: ['', 'yes', '42', 'yes', '85', 'no'],
    said: [
      'Hi! I am your arithmetic tutor. Shall we practise?',
      'What is 12 + 30?',
      'Well done.',
      'What is 48 + 37?',
      'Two in a row. Shall we try a harder one?',
      'Goodbye.',
    ],
  },
  {
    name: 'documented_tutor.csv: an interjection, and back to the start',
    csv: { fixture: 'documented_tutor.csv' },
    script: {
      rules: [
        { role: 'classifier', match: 'Which of the following is True?', reply: ['A', 'B'] },
        { role: 'classifier', reply: 'No' },
        { role: 'chatbot', match: 'bring the user back to arithmetic', reply: 'It is sunny. Back to sums.' },
        { role: 'chatbot', reply: 'Goodbye.' },
      ],
    },
    replies: ['', 'is it sunny?', 'no thanks'],
    said: [
      'Hi! I am your arithmetic tutor. Shall we practise?',
      'It is sunny. Back to sums.',
      'Hi! I am your arithmetic tutor. Shall we practise?',
    ],
  },
  {
    name: 'the tour: thought_qa, chat_suffix, Question Prompt, Conv Scope, $var arguments, p.* by condition',
    csv: { text: TOUR },
    script: tourScript(['Yes', 'Yes']),
    replies: ['', 'sure', 'wow', 'yes please', 'yum', 'again'],
    said: [
      'Welcome! Shall I tell you about the town?',
      'Did you know our clock runs backwards?',
      'Lovely. Would you like to hear about the food too?',
      'Apple pie is sweet and popular.',
      'You have been here 2 times.',
      'You have been here 2 times.',
    ],
  },
  {
    name: 'the tour: yes/no asked as no-then-yes, and p.* without conditions',
    csv: { text: TOUR },
    script: tourScript(['No']),
    replies: ['', 'no thanks', 'bye', 'bye again'],
    said: ['Welcome! Shall I tell you about the town?', 'Farewell, traveller.', 'Goodbye.', 'Goodbye.'],
  },
  {
    name: 'an interjection inside a function call, returning to the caller',
    csv: {
      text: `Name,Action,Instruction,Transitions,Condition Interjection
begin,chat_exact,Let us begin.,call,
call,function,answer = ask_name(),thanks,
ask_name(),chat_exact,What is your name?,return,
thanks,chat_exact,Thanks $answer,thanks,
help,chat_exact,You can tell me any name.,return,The user asks for help.
`,
    },
    script: { rules: [{ role: 'classifier', reply: ['B', 'A', 'B', 'B'] }] },
    replies: ['', 'ok', 'what do you need?', 'I see', 'bye'],
    said: [
      'Let us begin.',
      'What is your name?',
      'You can tell me any name.',
      'Thanks You can tell me any name.',
      'Thanks You can tell me any name.',
    ],
  },
  {
    name: "compiled recursive_fib: a bare return after a transition node returns the frame's last reply",
    csv: { fixture: 'compiled_fib.csv' },
    script: { rules: [] },
    replies: ['', 'Ada'],
    said: ['What is your name?', '[] [] [8] [What is your name?]'],
  },
  {
    name: 'choices "No." and "Yes." asked by letter, "YES" and "no" as Yes or No',
    csv: {
      text: `Name,Action,Instruction,Transitions,Transition Question,Transition Choice A,Transition Choice B
start1,chat_exact,Need more help?,"more,sure",Is the user done?,No.,Yes.
more,chat_exact,What else?,sure,,,
sure,chat_exact,Sure?,"bye,start1",Is the user sure?,YES,no
bye,chat_exact,Bye.,bye,,,
`,
    },
    script: { rules: [{ role: 'classifier', reply: ['B', 'Yes'] }] },
    replies: ['', 'all done', 'yes'],
    said: ['Need more help?', 'Sure?', 'Bye.'],
  },
  {
    name: 'reply_start_type prefix: past replies begin with the reply start, the one asked for is not sent',
    csv: {
      text: `Name,Action,Instruction,Transitions
start1,chat,Greet the user.,think
think,thought,Decide what the user needs.,answer
answer,chat,Answer the user.,answer
`,
    },
    config: { autograms: { reply_start_type: 'prefix' }, ours: { replyStartType: 'prefix' } },
    script: {
      rules: [
        { role: 'chatbot', match: '/Greet the user\\.$/', reply: 'Hello!' },
        { role: 'chatbot', match: '/Decide what the user needs\\.$/', reply: 'They want cake.' },
        { role: 'chatbot', reply: 'Here is cake.' },
      ],
    },
    replies: ['', 'Something sweet?', 'More!'],
    said: ['Hello!', 'Here is cake.', 'Here is cake.'],
  },
];

/** A spreadsheet AutoGRAMS refuses (loading it, or on reaching the node), and meta-agent's lint with it. */
interface Refusal {
  name: string;
  csv: string;
  /** What AutoGRAMS' error says. */
  theirs: string;
  /** The node and the message of meta-agent's lint error. */
  ours: string;
}

const REFUSALS: Refusal[] = [
  {
    name: '"$" and a space in an instruction',
    csv: `Name,Action,Instruction,Transitions
start1,chat_exact,It costs $ 5.,start1
`,
    theirs: 'Space after `$` not allowed. If you intended this, use `\\$` instead',
    ours: 'start1: space after "$" in its instruction ("costs $ 5."): "$" starts a variable name',
  },
  {
    name: '"$" and a space in a transition question, beside "\\$" and a space in the instruction',
    csv: `Name,Action,Instruction,Transitions,Transition Question,Transition Choice A,Transition Choice B
start1,chat_exact,It costs \\$ 5.,"start1,bye",Did the user pay $ 5?,yes,no
bye,chat_exact,Bye.,bye,,,
`,
    theirs: 'Space after `$` not allowed. If you intended this, use `\\$` instead',
    ours: 'start1: space after "$" in its transitionQuestion ("pay $ 5?"): "$" starts a variable name',
  },
  {
    name: 'a p.* group of one',
    csv: `Name,Action,Instruction,Transitions
start1,chat_exact,Hello.,pick.*
pick.a,chat_exact,First.,start1
`,
    theirs: 'invalid .* transition must have at least 2 possible transitions for node: start1',
    ours: 'start1: transition "pick.*" needs nodes "pick.a" and "pick.b" at least; there is no "pick.b"',
  },
  {
    name: 'a name.n of one',
    csv: `Name,Action,Instruction,Transitions
start1,chat_exact,Hello.,visit.n
visit.1,chat_exact,First.,start1
`,
    theirs: 'invalid .n transition. Must have at least 2 possible transitions for node: start1',
    ours: 'start1: transition "visit.n" needs nodes "visit.1" and "visit.2" at least; there is no "visit.2"',
  },
];

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'meta-agent-reference-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.skipIf(missing !== undefined)(
  `the same conversations as AutoGRAMS 0.1 itself${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    it.each(SCENARIOS.map((scenario) => [scenario.name, scenario] as const))(
      '%s',
      async (_name, scenario) => {
        const csvPath = await spreadsheet(scenario);
        const theirs = await runReference(scenario, csvPath);
        expect(theirs.error).toBeNull();
        expect(theirs.replies).toEqual(scenario.said);
        const { file } = csvGraph(await readFile(csvPath, 'utf8'));
        const graph = new StaticGraph({ ...file, config: { ...file.config, ...scenario.config?.ours } });
        const ours = await converse(graph, scenario.script, [undefined, ...scenario.replies.slice(1)]);

        expect(ours.said).toEqual(theirs.replies);
        // AutoGRAMS visits a function node twice, on the call and on the return; we count the call.
        const calls = new Set(graph.nodes().flatMap((n) => (isCallAction(n.action) ? [n.name] : [])));
        // AutoGRAMS also names a callable node `f()` whatever its parameters.
        const path = (nodes: string[]) =>
          nodes.filter((name) => !calls.has(name)).map((name) => name.replace(/\(.*\)$/s, '()'));
        expect(path(ours.entered)).toEqual(path(theirs.trajectory));
        expect(ours.calls.map(comparable)).toEqual(theirs.calls.map(comparable));
        for (const [i, call] of theirs.calls.entries())
          if (call.role === 'chatbot')
            expect(ours.calls[i]!.request).toMatchObject({
              temperature: call.temperature,
              maxTokens: call.max_tokens,
            });
      },
    );
  },
);

describe.skipIf(missing !== undefined)(
  `what AutoGRAMS 0.1 refuses, refused when the graph loads${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    it.each(REFUSALS.map((refusal) => [refusal.name, refusal] as const))('%s', async (name, refusal) => {
      // The user's reply takes the run past the first node, where AutoGRAMS reads its transition question.
      const scenario: Scenario = {
        name: `refused ${name}`,
        csv: { text: refusal.csv },
        script: { rules: [{ role: 'classifier', reply: 'Yes' }] },
        replies: ['', 'ok'],
        said: [],
      };
      const theirs = await runReference(scenario, await spreadsheet(scenario));
      expect(theirs.error).toContain(refusal.theirs);
      const errors = lintGraph(csvGraph(refusal.csv).file).filter((f) => f.severity === 'error');
      expect(errors.map((f) => `${f.node}: ${f.message}`)).toEqual([refusal.ours]);
    });
  },
);

async function spreadsheet(scenario: Scenario): Promise<string> {
  if ('fixture' in scenario.csv) return join(FIXTURES, scenario.csv.fixture);
  const path = join(dir, `${scenario.name.replace(/\W+/g, '_').slice(0, 40)}.csv`);
  await writeFile(path, scenario.csv.text);
  return path;
}

async function runReference(scenario: Scenario, csv: string): Promise<ReferenceRun> {
  const base = join(dir, scenario.name.replace(/\W+/g, '_').slice(0, 40));
  await writeFile(`${base}.script.json`, JSON.stringify(scenario.script));
  await writeFile(
    `${base}.scenario.json`,
    JSON.stringify({
      csv,
      script: `${base}.script.json`,
      replies: scenario.replies,
      config: scenario.config?.autograms ?? {},
    }),
  );
  const run = spawnSync(python!, [DRIVER, reference, `${base}.scenario.json`, `${base}.out.json`], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (run.status !== 0) throw new Error(`AutoGRAMS failed (exit ${run.status}):\n${run.stderr}`);
  return JSON.parse(await readFile(`${base}.out.json`, 'utf8')) as ReferenceRun;
}

/** A call as the comparison sees it: role, then each message with whitespace runs made one space. */
function comparable(call: Pick<RecordedCall, 'role' | 'messages'>): string[] {
  return [
    call.role,
    ...call.messages.map((message) => {
      let text = message.content;
      if (call.role === 'classifier')
        text = text
          .replace(/\n(Answer with the letter only\.|Answer Yes or No only\.)$/, '')
          .replace(/\n \(Yes or No\)$/, '');
      // AutoGRAMS' chat_suffix node misspells the template its config spells right ("repsonse").
      text = text.replace('whole repsonse', 'whole response');
      return `${message.role}: ${text.replace(/\s+/g, ' ').trim()}`;
    }),
  ];
}
