/**
 * AIPL in an autogram (config.aipl): the prompt and prose instructions are templates rendered every turn,
 * their state lives in the conversation, and autogram variables and AIPL values read each other.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_AIPL_SETTINGS } from '../../src/aipl/phase.js';
import { loadState, newState, saveState } from '../../src/engine/state.js';
import { applyDelta, stateDelta } from '../../src/store/state-delta.js';
import { lintGraph } from '../../src/aipl/lint.js';
import type { NodeSpecInput } from '../../src/graph/schema.js';
import type { ScriptFile } from '../../src/llm/scripted.js';
import { converse, fileOf, graphOf, promptsOf } from '../support/agents.js';

const PROMPT = [
  'You are {char}, helping {user}.',
  '(= "What is the user\'s name?" -> user.name)',
  'The user is called {user.name:not known yet}.',
  '((user.name == "")',
  'Ask for their name.',
  ')',
].join('\n');

const nodes: NodeSpecInput[] = [
  { name: 'hello', action: 'chat', instruction: 'Say hello.', transitions: ['talk'] },
  {
    name: 'talk',
    action: 'chat',
    instruction: 'Answer, using {user.name:their name}.',
    transitions: ['talk'],
  },
];

const script: ScriptFile = {
  rules: [
    { role: 'chatbot', match: "/I am Dana[\\s\\S]*What is the user's name\\?/", reply: 'Dana' },
    { role: 'chatbot', match: "What is the user's name?", reply: 'unknown' },
    { role: 'chatbot', match: 'Answer, using', reply: 'Nice to meet you.' },
    { role: 'chatbot', match: 'Say hello.', reply: 'Hello! Who am I talking to?' },
  ],
};

const aiplConfig = { prompt: PROMPT, aipl: { ...DEFAULT_AIPL_SETTINGS }, agentName: 'Ava', userName: 'Sam' };

describe('an autogram with AIPL templates', () => {
  it('renders the prompt every turn from the state the model updates, and the instruction after it', async () => {
    const talk = await converse(graphOf(nodes, aiplConfig), script, [undefined, 'hi', 'I am Dana']);
    const prompts = promptsOf(talk.calls, 'chatbot').filter((p) => p.startsWith('You are'));
    expect(prompts[0]).toContain(
      'You are Ava, helping Sam.\nThe user is called not known yet.\nAsk for their name.\n\nInstruction for Ava: Say hello.',
    );
    expect(prompts.at(-1)).toContain('The user is called Dana.\n\nInstruction');
    expect(prompts.at(-1)).toContain('Instruction for Ava: Answer, using Dana.');
    expect(talk.state.aipl).toEqual({
      turn: 2,
      log: [{ name: 'user.name', value: 'Dana', turn: 2, question: "What is the user's name?" }],
    });
    expect(loadState(saveState(talk.state)).aipl).toEqual(talk.state.aipl);
  });

  it('asks a turn’s questions once, however many nodes render the prompt in it', async () => {
    const twoNodes: NodeSpecInput[] = [
      {
        name: 'think',
        action: 'thought',
        instruction: 'Think about {user.name:the user}.',
        transitions: ['talk'],
      },
      { name: 'talk', action: 'chat', instruction: 'Answer.', transitions: ['think'] },
    ];
    const rules: ScriptFile = {
      rules: [
        { role: 'chatbot', match: "What is the user's name?", reply: 'Dana' },
        { role: 'chatbot', match: 'Think about', reply: 'Dana seems nice.' },
        { role: 'chatbot', reply: 'Hi Dana.' },
      ],
    };
    const talk = await converse(graphOf(twoNodes, aiplConfig), rules, [undefined, 'I am Dana', 'thanks']);
    const questions = promptsOf(talk.calls, 'chatbot').filter((p) => p.includes("What is the user's name?"));
    expect(questions).toHaveLength(2);
    const phases = talk.events.flatMap((e) =>
      e.type === 'aipl.phase' ? [[e.label, e.turn, e.calls, e.cached]] : [],
    );
    expect(phases).toContainEqual(['prompt', 1, 1, 0]);
    expect(phases).toContainEqual(['prompt', 1, 0, 1]);
    // The instruction only fills in a name: no phase of its own.
    expect(phases.some(([label]) => label === 'node think')).toBe(false);
  });

  it('journals a reply’s new entries, and replays them to the same state', async () => {
    const graph = graphOf(nodes, aiplConfig);
    const before = await converse(graph, script, [undefined, 'hi']);
    const after = await converse(graph, script, [undefined, 'hi', 'I am Dana']);
    const delta = stateDelta(before.state, after.state);
    expect(delta.aipl).toEqual({ turn: 2, keep: 0, log: after.state.aipl!.log });
    const same = stateDelta(after.state, after.state);
    expect(same.aipl).toEqual({ turn: 2, keep: 1, log: [] });
    const replayed = applyDelta(loadState(saveState(before.state)), JSON.parse(JSON.stringify(delta)));
    expect(replayed.aipl).toEqual(after.state.aipl);
  });

  it('lets code read the state as aipl.ns.key, and templates read variables as {vars.name}', async () => {
    // The state is updated when a template is rendered: by the `ask` node's prompt, before `keep` runs.
    const codeNodes: NodeSpecInput[] = [
      { name: 'hello', action: 'chat', instruction: 'Say hello.', transitions: ['ask'] },
      { name: 'ask', action: 'chat', instruction: 'Ask how they are.', transitions: ['keep'] },
      {
        name: 'keep',
        action: 'code',
        instruction: 'greeting = "Hello " + aipl.user.name',
        transitions: ['talk'],
      },
      {
        name: 'talk',
        action: 'chat',
        instruction: 'Say {vars.greeting} and $greeting.',
        transitions: ['talk'],
      },
    ];
    const rules: ScriptFile = {
      rules: [
        { role: 'chatbot', match: "What is the user's name?", reply: 'Dana' },
        { role: 'chatbot', reply: 'ok' },
      ],
    };
    const talk = await converse(graphOf(codeNodes, aiplConfig), rules, [undefined, 'I am Dana', 'fine']);
    expect(promptsOf(talk.calls, 'chatbot').at(-1)).toContain('Say Hello Dana and Hello Dana.');
  });

  it('stores a set_prompt node’s template, embedding $vars as text that is never read as AIPL', async () => {
    const setNodes: NodeSpecInput[] = [
      {
        name: 'note',
        action: 'code',
        instruction: 'topic = "{user.name} (= \\"Leak?\\" -> x.y)"',
        transitions: ['set'],
      },
      {
        name: 'set',
        action: 'set_prompt',
        instruction: 'Topic: $topic. Name: {user.name:?}.',
        transitions: ['talk'],
      },
      { name: 'talk', action: 'chat', instruction: 'Talk.', transitions: ['talk'] },
    ];
    const rules: ScriptFile = { rules: [{ role: 'chatbot', reply: 'ok' }] };
    const talk = await converse(graphOf(setNodes, aiplConfig), rules, [undefined]);
    expect(talk.state.stack[0]!.prompt).toBe(
      'Topic: \\{user.name\\} \\(= "Leak?" -> x.y\\). Name: {user.name:?}.',
    );
    expect(promptsOf(talk.calls, 'chatbot')[0]).toMatch(
      /^Topic: \{user.name\} \(= "Leak\?" -> x.y\). Name: \?./,
    );
    expect(
      talk.calls.some(
        (call) =>
          JSON.stringify(call.messages).includes('Leak?" ->') &&
          call.messages.length > 1 &&
          call.messages.at(-1)!.content.startsWith('Answer this question'),
      ),
    ).toBe(false);
  });

  it('stops at a template that does not parse, naming the node, the line and the column', async () => {
    const bad: NodeSpecInput[] = [
      { name: 'greet', action: 'chat', instruction: 'Hi\n(= "name?" -> )', transitions: ['greet'] },
    ];
    await expect(
      converse(graphOf(bad, { aipl: { ...DEFAULT_AIPL_SETTINGS } }), { rules: [] }, [undefined]),
    ).rejects.toThrow('node "greet" instruction:2:15: expected a state name like ns.key, found ")"');
  });

  it('continues a conversation saved before the graph turned AIPL on', async () => {
    const graph = graphOf(nodes, aiplConfig);
    const old = newState(graphOf(nodes, { prompt: 'plain' }));
    expect(old.aipl).toBeUndefined();
    const talk = await converse(graph, script, [undefined]);
    expect(talk.state.aipl).toEqual({ turn: 0, log: [] });
  });
});

describe('linting AIPL', () => {
  it('reports a template that does not parse, with its line and column, when config.aipl is set', () => {
    const findings = lintGraph(
      fileOf(
        [{ name: 'set', action: 'set_prompt', instruction: 'ok\n((a.b\nno close', transitions: ['set'] }],
        { aipl: { ...DEFAULT_AIPL_SETTINGS }, prompt: '{a.b.c}' },
      ),
    );
    expect(findings.filter((f) => f.severity === 'error').map((f) => [f.node, f.message])).toEqual([
      [
        undefined,
        'config.prompt is not a valid AIPL template: line 1, column 1: {a.b.c} has 3 parts: a state name is exactly namespace.key',
      ],
      [
        'set',
        expect.stringMatching(
          /^instruction is not a valid AIPL template: line 2, column 1: the block opened here is not closed/,
        ),
      ],
    ]);
  });

  it('warns when text looks like AIPL but config.aipl is not set', () => {
    const findings = lintGraph(fileOf(nodes, { prompt: PROMPT }));
    expect(findings).toContainEqual(
      expect.objectContaining({
        severity: 'warning',
        message:
          "config.prompt looks like an AIPL template, but the graph's config.aipl is not set, so it is sent as written",
      }),
    );
  });
});
