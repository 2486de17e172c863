/** Every action AutoGRAMS defines runs, with the reference's prompt formation for each. */
import { describe, expect, it } from 'vitest';
import { endWithRequired } from '../../src/engine/reply-text.js';
import { converse, csvGraph, promptsOf } from '../support/agents.js';

describe('AutoGRAMS actions', () => {
  const suffixGraph = csvGraph(`Name,Action,Instruction,Transitions
open,chat_exact,Hi! What brings you here?,steer
steer,chat_suffix,Would you like to book a table for tonight?,steer
`);

  it('chat_suffix asks for its text in bold at the end of the reply, and ends the reply with it (autograms/nodes/chat_nodes.py:110-146, autogram_config.py:34)', async () => {
    const { said, calls } = await converse(
      suffixGraph,
      {
        rules: [
          {
            role: 'chatbot',
            reply: 'Happy to help with dinner plans. **Would you like to book a table for tonigh',
          },
        ],
      },
      [undefined, 'I am hungry'],
    );
    expect(promptsOf(calls, 'chatbot')[0]).toContain(
      "User: I am hungry\n\nInstruction for Agent: Respond to the user's last reply, and then include the **bold** text at the end of your response to direct the conversation:**Would you like to book a table for tonight?**. It is also okay for the whole response to be the bold text if it fits the situation.\nAgent's reply:",
    );
    // The reply is completed with the exact text where the model's words trail off.
    expect(said[1]).toBe('Happy to help with dinner plans. Would you like to book a table for tonight?');
  });

  it('chat_suffix replies with its text alone when the model leaves it out (autograms/autogram_utils.py:104-110, 113-140)', async () => {
    const { said } = await converse(
      suffixGraph,
      { rules: [{ role: 'chatbot', reply: 'Sure, I can help.' }] },
      [undefined, 'I am hungry'],
    );
    expect(said[1]).toBe('Would you like to book a table for tonight?');
    expect(endWithRequired('**Book now?**', 'Book now?')).toBe('Book now?');
  });

  it('thought_qa stores the question and the answer in its variable (autograms/nodes/thought_nodes.py:64-72)', async () => {
    const graph = csvGraph(`Name,Action,Instruction,Transitions
ask,thought_qa,qa = What is the capital of France?,say
say,chat_exact,$qa,say
`);
    const { said } = await converse(graph, { rules: [{ role: 'chatbot', reply: 'Paris.' }] }, [undefined]);
    expect(said[0]).toBe('What is the capital of France?\n\nParis.');
  });

  it("a chat_exact node's instruction never stays in later prompts (autograms/nodes/chat_nodes.py:164)", async () => {
    const graph = csvGraph(`Name,Action,Instruction,Transitions
hello,chat_exact,Welcome to the bakery!,answer
answer,chat,Answer the user.,answer
`);
    const { calls } = await converse(graph, { rules: [{ role: 'chatbot', reply: 'We bake daily.' }] }, [
      undefined,
      'Do you have bread?',
    ]);
    expect(calls[0]!.messages.map((m) => m.content)).toEqual([
      "You are an agent.\n\nAgent's reply:",
      'Welcome to the bakery!',
      "User: Do you have bread?\n\nInstruction for Agent: Answer the user.\nAgent's reply:",
    ]);
  });

  it('keeps a chat instruction that no user reply preceded, and a thought always; drops a chat instruction that answered a reply (autograms/nodes/chat_nodes.py:60-63, thought_nodes.py:35; base_node.py:684-703)', async () => {
    const graph = csvGraph(`Name,Action,Instruction,Transitions
greet,chat,Greet the user.,think
think,thought,Decide what the user needs.,answer
answer,chat,Answer the user.,answer
`);
    const { calls } = await converse(
      graph,
      {
        rules: [
          { role: 'chatbot', match: "/Greet the user\\.\\nAgent's reply:$/", reply: 'Hello!' },
          {
            role: 'chatbot',
            match: "/Decide what the user needs\\.\\nAgent's reply:$/",
            reply: 'They want cake.',
          },
          { role: 'chatbot', reply: 'Here is cake.' },
        ],
      },
      [undefined, 'Something sweet?', 'More!'],
    );
    expect(calls.at(-1)!.messages.map((m) => m.content)).toEqual([
      "You are an agent.\n\nInstruction for Agent: Greet the user.\nAgent's reply:",
      'Hello!',
      "User: Something sweet?\n\nInstruction for Agent: Decide what the user needs.\nAgent's reply:",
      'They want cake.',
      "Instruction for Agent: Answer the user.\nAgent's reply:",
      'Here is cake.',
      "User: More!\n\nInstruction for Agent: Answer the user.\nAgent's reply:",
    ]);
  });
});
