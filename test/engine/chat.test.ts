import { describe, expect, it } from 'vitest';
import { Interpreter, NodeError } from '../../src/engine/interpreter.js';
import { variablesInScope } from '../../src/engine/frames.js';
import type { ScriptFile } from '../../src/llm/scripted.js';
import type { NodeSpecInput } from '../../src/graph/schema.js';
import { graphOf, scriptedModels, withAgent } from '../support/agents.js';

const aiGraph: NodeSpecInput[] = [
  {
    name: 'ask_question',
    action: 'chat_exact',
    instruction: 'Would you like me to tell you more about the latest advances in AI?',
    transitions: ['ask_user_preference', 'tell_about_ai'],
    transitionQuestion: 'Does the user want to talk about ai?',
    transitionChoices: ['no', 'yes'],
  },
  {
    name: 'tell_about_ai',
    action: 'chat',
    instruction: 'Tell the user about AI.',
    transitions: ['ask_question'],
  },
  {
    name: 'ask_user_preference',
    action: 'chat',
    instruction: 'Ask what they would prefer.',
    transitions: ['ask_question'],
  },
];

const aiScript: ScriptFile = {
  rules: [
    // The user's reply comes last in the conversation, just before the question.
    { role: 'classifier', match: '/User: sure\\n\\nDoes the user want to talk about ai\\?/', reply: 'Yes' },
    { role: 'classifier', match: 'Does the user want to talk about ai?', reply: 'No' },
    { role: 'chatbot', match: 'Tell the user about AI.', reply: 'AutoGRAMS was released.' },
    { role: 'chatbot', match: 'Ask what they would prefer.', reply: 'What would you rather discuss?' },
  ],
};

describe('conversations with a scripted model', () => {
  it('lets the agent speak first, then follows the yes/no answer of the classifier', async () => {
    await withAgent(aiGraph, aiScript, async (agent, events) => {
      const first = await agent.reply(undefined);
      expect(first.reply).toBe('Would you like me to tell you more about the latest advances in AI?');
      const yes = await agent.reply('sure', first.state);
      expect(yes.reply).toBe('AutoGRAMS was released.');
      const again = await agent.reply('ok', yes.state);
      const no = await agent.reply('not really', again.state);
      expect(no.reply).toBe('What would you rather discuss?');
      expect(events.flatMap((e) => (e.type === 'node.entered' ? [e.node] : []))).toEqual([
        'ask_question',
        'tell_about_ai',
        'ask_question',
        'ask_user_preference',
      ]);
      const choice = events.find((e) => e.type === 'transition' && e.kind === 'choice');
      expect(choice).toEqual({
        type: 'transition',
        from: 'ask_question',
        to: 'tell_about_ai',
        kind: 'choice',
        question: 'Does the user want to talk about ai?',
        choices: ['yes', 'no'],
        answer: 'yes',
      });
      expect(events.filter((e) => e.type === 'reply')).toHaveLength(4);
      expect(events.filter((e) => e.type === 'user').map((e) => (e.type === 'user' ? e.text : ''))).toEqual([
        'sure',
        'ok',
        'not really',
      ]);
    });
  });

  it('jumps to an interjection node when the classifier picks its condition, and goes on normally otherwise', async () => {
    const nodes: NodeSpecInput[] = [
      { name: 'chat1', action: 'chat_exact', instruction: 'How are you?', transitions: ['chat2'] },
      { name: 'chat2', action: 'chat_exact', instruction: 'Good to hear.', transitions: ['chat2'] },
      {
        name: 'help',
        action: 'chat_exact',
        instruction: 'Here is some help.',
        conditionInterjection: 'The user asks for help.',
        transitions: ['chat2'],
      },
      {
        name: 'bye',
        action: 'chat_exact',
        instruction: 'Goodbye!',
        conditionInterjection: 'The user says goodbye.',
        transitions: ['quit'],
      },
    ];
    const script: ScriptFile = {
      rules: [
        {
          role: 'classifier',
          match: '/User: help me[\\s\\S]*Which of the following is True\\?/',
          reply: 'A',
        },
        { role: 'classifier', match: '/User: bye[\\s\\S]*Which of the following is True\\?/', reply: 'B' },
        { role: 'classifier', match: 'Which of the following is True?', reply: 'C' },
      ],
    };
    await withAgent(nodes, script, async (agent, events) => {
      const start = await agent.reply(undefined);
      const fine = await agent.reply('fine', start.state);
      expect(fine.reply).toBe('Good to hear.');
      const helped = await agent.reply('help me', fine.state);
      expect(helped.reply).toBe('Here is some help.');
      const ended = await agent.reply('bye', helped.state);
      expect(ended).toMatchObject({ reply: 'Goodbye!', ended: false });
      expect((await agent.reply('', ended.state)).ended).toBe(true);
      const interjection = events.find((e) => e.type === 'transition' && e.kind === 'interjection');
      expect(interjection).toMatchObject({
        from: 'chat2',
        to: 'help',
        question: 'Which of the following is True?',
        choices: ['The user asks for help.', 'The user says goodbye.', 'None of the above.'],
        answer: 'The user asks for help.',
      });
    });
  });

  it('embeds a thought stored in a variable into a later instruction', async () => {
    const nodes: NodeSpecInput[] = [
      { name: 'start1', action: 'thought', instruction: 'topic = Pick a topic.', transitions: ['talk'] },
      { name: 'talk', action: 'chat', instruction: 'Talk about $topic.', transitions: ['talk'] },
    ];
    const script: ScriptFile = {
      rules: [
        { role: 'chatbot', match: "/Pick a topic\\.\\nAgent's reply:$/", reply: 'volcanoes' },
        { role: 'chatbot', match: "/Talk about volcanoes\\.\\nAgent's reply:$/", reply: 'Volcanoes erupt.' },
      ],
    };
    await withAgent(nodes, script, async (agent, events) => {
      const { reply, state } = await agent.reply(undefined);
      expect(reply).toBe('Volcanoes erupt.');
      expect(variablesInScope(state).topic).toBe('volcanoes');
      expect(events).toContainEqual({
        type: 'variable.set',
        name: 'topic',
        value: 'volcanoes',
        node: 'start1',
      });
    });
  });

  it('prepends the prompt set and appended by prompt nodes to the first input', async () => {
    const nodes: NodeSpecInput[] = [
      { name: 'start1', action: 'set_prompt', instruction: 'You are a pirate.', transitions: ['more'] },
      { name: 'more', action: 'append_prompt', instruction: 'You like $thing.', transitions: ['speak'] },
      { name: 'speak', action: 'chat', instruction: 'Greet.', transitions: ['speak'] },
    ];
    const script: ScriptFile = {
      rules: [
        {
          role: 'chatbot',
          match: '/^You are a pirate\\.\\nYou like gold\\.\\n\\nInstruction for Agent: Greet\\./',
          reply: 'Arr!',
        },
      ],
      default: 'wrong prompt',
    };
    await withAgent(
      [{ name: 'init', action: 'code', instruction: "thing = 'gold'", transitions: ['start1'] }, ...nodes],
      script,
      async (agent) => {
        expect((await agent.reply(undefined)).reply).toBe('Arr!');
      },
      { startNode: 'init' },
    );
  });

  it('lets the user speak first: the start node answers the first user text', async () => {
    const nodes: NodeSpecInput[] = [
      { name: 'echo', action: 'chat', instruction: 'Answer.', transitions: ['echo'] },
    ];
    const script: ScriptFile = {
      rules: [
        {
          role: 'chatbot',
          match: "/^User: hello\\n\\nInstruction for Agent: Answer\\.\\nAgent's reply:$/",
          reply: 'Hi there.',
        },
      ],
    };
    await withAgent(nodes, script, async (agent) => {
      expect((await agent.reply('hello')).reply).toBe('Hi there.');
    });
  });
});

describe('errors in a run', () => {
  it('names the node of an unknown $var and leaves the state from before the reply usable', async () => {
    const nodes: NodeSpecInput[] = [
      { name: 'greet', action: 'chat_exact', instruction: 'Hello.', transitions: ['broken'] },
      { name: 'broken', action: 'chat', instruction: 'Mention $missing.', transitions: ['greet'] },
    ];
    await withAgent(nodes, { rules: [] }, async (agent, events) => {
      const first = await agent.reply(undefined);
      const saved = JSON.stringify(first.state);
      const error = await agent.reply('hi', first.state).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(NodeError);
      expect((error as NodeError).node).toBe('broken');
      expect((error as Error).message).toBe(
        'node "broken": instruction uses $missing, but no variable "missing" is in scope',
      );
      expect(JSON.stringify(first.state)).toBe(saved);
      expect(events.at(-1)).toEqual({ type: 'error', node: 'broken', message: (error as Error).message });
      // The same state can be tried again: nothing of the failed reply stuck to it.
      await expect(agent.reply('hi', first.state)).rejects.toThrow(/node "broken"/);
    });
  });

  it("runs as many steps as the graph's config.runLimits allow, and no more", async () => {
    const chain: NodeSpecInput[] = Array.from({ length: 60 }, (_, i) => ({
      name: `n${i}`,
      action: 'transition',
      transitions: [`n${i + 1}`],
    }));
    chain.push({ name: 'n60', action: 'chat_exact', instruction: 'Made it.' });
    const runWith = async (maxSteps: number) => {
      const agent = await Interpreter.create({
        graph: graphOf(chain, { runLimits: { maxSteps, maxDepth: 200 } }),
        models: scriptedModels({ rules: [] }),
      });
      try {
        return await agent.reply(undefined);
      } finally {
        agent.dispose();
      }
    };
    const stopped = await runWith(50).catch((error: unknown) => error as NodeError);
    expect(stopped).toBeInstanceOf(NodeError);
    expect((stopped as NodeError).message).toContain('stopped after 50 steps without a reply');
    expect((stopped as NodeError).hint).toContain('raise config.runLimits.maxSteps in the graph file');
    expect((await runWith(61)).reply).toBe('Made it.');
  });

  it('stops a graph that loops without replying, naming where it stopped', async () => {
    const nodes: NodeSpecInput[] = [
      { name: 'a', action: 'transition', transitions: ['b'] },
      { name: 'b', action: 'transition', transitions: ['a'] },
    ];
    const agent = await Interpreter.create({
      graph: graphOf(nodes),
      models: scriptedModels({ rules: [] }),
      limits: { maxSteps: 50 },
    });
    try {
      await expect(agent.reply(undefined)).rejects.toThrow(
        'node "b": stopped after 50 steps without a reply; the graph seems to loop (next node: "a")',
      );
    } finally {
      agent.dispose();
    }
  });

  it('ends the reply with an error naming the code node that broke a sandbox limit', async () => {
    const nodes: NodeSpecInput[] = [
      { name: 'start1', action: 'chat_exact', instruction: 'Ready.', transitions: ['spin'] },
      { name: 'spin', action: 'code', instruction: 'while (true) {}', transitions: ['start1'] },
    ];
    await withAgent(
      nodes,
      { rules: [] },
      async (agent) => {
        const first = await agent.reply(undefined);
        const error = await agent.reply('go', first.state).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(NodeError);
        expect((error as NodeError).node).toBe('spin');
        expect((error as Error).message).toBe(
          'node "spin": code ran longer than 50 ms (config.sandbox.timeoutMs)',
        );
        expect((error as NodeError).cause).toMatchObject({ kind: 'timeout' });
      },
      { sandbox: { timeoutMs: 50, memoryMb: 64 } },
    );
  });

  it('names the wildcard member whose condition failed', async () => {
    const nodes: NodeSpecInput[] = [
      { name: 'start1', action: 'transition', transitions: ['check.*'] },
      {
        name: 'check.a',
        action: 'chat_exact',
        instruction: 'A',
        booleanCondition: 'missing > 1',
        transitions: ['quit'],
      },
      { name: 'check.b', action: 'chat_exact', instruction: 'B', transitions: ['quit'] },
    ];
    await withAgent(nodes, { rules: [] }, async (agent) => {
      const error = await agent.reply(undefined).catch((e: unknown) => e);
      expect((error as NodeError).node).toBe('check.a');
      expect((error as Error).message).toMatch(/^node "check\.a": .*missing/);
    });
  });
});
