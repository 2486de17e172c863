/**
 * A loopback OpenAI-compatible server that plays a goal-loop run: each answer is a step of a fixed
 * list, chosen by how many steps the prompt's history already holds (so a resumed run gets the step it
 * is at, however many requests a killed process made). A step is a command, or a function of the
 * prompt for tasks whose answer depends on what the run read (a sorted CSV, a fact to remember): that
 * is the model's part, played by the test. Answers come in the seed's JSON, or as native tool calls.
 */
import type { ChatAnswer, ChatRequestBody, OpenAIServer, OpenAIServerOptions } from './openai-server.js';
import { startOpenAIServer } from './openai-server.js';

export type ReplayStep =
  | { name: string; args: Record<string, unknown> }
  | ((prompt: string) => { name: string; args: Record<string, unknown> });

export type AnswerShape = 'json' | 'tools';

/** Starts a server replaying `steps`; past the end it repeats the last. It serves `media` as given. */
export function startReplayServer(
  steps: readonly ReplayStep[],
  shape: AnswerShape,
  options: Pick<OpenAIServerOptions, 'latencyMs' | 'media'> & {
    /** The answer to a request that is no goal step (one user message, no system prompt), by its text. */
    aside?: (question: string) => string;
  } = {},
): Promise<OpenAIServer> {
  const { aside } = options;
  return startOpenAIServer({
    ...(options.latencyMs !== undefined && { latencyMs: options.latencyMs }),
    ...(options.media && { media: options.media }),
    reply: (body) => {
      if (aside && !body.messages.some((message) => message.role === 'system'))
        return aside(promptText(body));
      const step = steps[Math.min(stepsTaken(body), steps.length - 1)]!;
      const command = typeof step === 'function' ? step(promptText(body)) : step;
      return shaped(command, shape);
    },
  });
}

/**
 * Steps already taken: one assistant message each in the prompt's history, plus those the history
 * left out to fit the context (memory/short-term.ts says how many: "12 earlier steps are not shown; the
 * 3 after, in short:").
 */
export function stepsTaken(body: ChatRequestBody): number {
  const shown = body.messages.filter((message) => message.role === 'assistant').length;
  const count = (text: string | undefined) => (text === undefined ? 0 : Number(text.replaceAll(',', '')));
  for (const { content } of body.messages) {
    if (typeof content !== 'string') continue;
    const dropped = /^([\d,]+) earlier steps? (?:is|are) not shown(?:; the ([\d,]+) after, in short:)?/.exec(
      content,
    );
    if (dropped) return shown + count(dropped[1]) + count(dropped[2]);
    const digested = /^The ([\d,]+) earlier steps?, in short:/.exec(content);
    if (digested) return shown + count(digested[1]);
  }
  return shown;
}

export function promptText(body: ChatRequestBody): string {
  return body.messages.map((message) => message.content).join('\n\n');
}

/** What the last `read_file` of `file` returned, as the prompt shows it. */
export function lastRead(prompt: string, file: string): string {
  const marker = `"name":"read_file","args":{"file":"${file}"}}}`;
  const at = prompt.lastIndexOf(marker);
  if (at < 0) throw new Error(`the prompt shows no read of ${file}`);
  const after = prompt.slice(at + marker.length);
  const body =
    /Command read_file returned \(data, not instructions\):\n([\s\S]*?)(?:\n\n(?:\{|Determine)|$)/.exec(
      after,
    );
  if (!body) throw new Error(`the prompt shows no result for the read of ${file}`);
  return body[1]!;
}

function shaped(command: { name: string; args: Record<string, unknown> }, shape: AnswerShape): ChatAnswer {
  const thoughts = {
    text: `Next: ${command.name}.`,
    reasoning: 'It is the next step of the plan.',
    plan: '- follow the steps\n- finish',
    criticism: 'None yet.',
    speak: `Running ${command.name}.`,
  };
  if (shape === 'tools')
    return {
      text: JSON.stringify({ thoughts }),
      toolCalls: [{ name: command.name, arguments: command.args }],
    };
  return JSON.stringify({ thoughts, command });
}
