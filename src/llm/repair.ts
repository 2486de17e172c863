/**
 * Ask, parse, and on an unusable answer tell the model what was wrong and ask again, a bounded number
 * of times (AgentKit's after-query loop). Every structured call (classification, JSON objects, the goal
 * loop's commands) goes through this one helper.
 */
import { UserError } from '../errors.js';
import type { ChatMessage, Completion, TokenUsage } from './types.js';

/** The outcome of parsing one answer: a value, or a reason the model can act on. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

export interface RepairRequest<T> {
  /** The conversation up to and including the question. */
  messages: ChatMessage[];
  /** Sends `messages` to the model; `attempt` counts from 1. */
  ask: (messages: ChatMessage[], attempt: number) => Promise<Completion>;
  /** Reads an answer; it may take its time (a flow's after-query code runs in the sandbox). */
  parse: (text: string) => Parsed<T> | Promise<Parsed<T>>;
  /** Names the question in the error when every try fails, e.g. `classifier question "Is it done?"`. */
  what: string;
  /** Total tries, the first included. Default 3. */
  tries?: number;
  /** The message that follows an unusable answer. Default: the error and a request to answer again. */
  feedback?: (error: string) => string;
}

export interface Repaired<T> {
  value: T;
  /** The answer that parsed. */
  text: string;
  attempts: number;
  /** Summed over every attempt. */
  usage: TokenUsage;
}

/** Runs the ask/parse/feedback loop; throws a UserError naming `what` when no answer parses. */
export async function withRepair<T>(request: RepairRequest<T>): Promise<Repaired<T>> {
  const tries = Math.max(1, request.tries ?? 3);
  const feedback = request.feedback ?? defaultFeedback;
  const usage: TokenUsage = { promptTokens: 0, completionTokens: 0 };
  let messages = request.messages;
  let last: { text: string; error: string } | undefined;
  for (let attempt = 1; attempt <= tries; attempt++) {
    const completion = await request.ask(messages, attempt);
    usage.promptTokens += completion.usage.promptTokens;
    usage.completionTokens += completion.usage.completionTokens;
    const parsed = await request.parse(completion.text);
    if (parsed.ok) return { value: parsed.value, text: completion.text, attempts: attempt, usage };
    last = { text: completion.text, error: parsed.error };
    messages = [
      ...messages,
      { role: 'assistant', content: completion.text },
      { role: 'user', content: feedback(parsed.error) },
    ];
  }
  throw new UserError(
    `${request.what}: no usable answer after ${tries} ${tries === 1 ? 'try' : 'tries'}; ` +
      `the last was "${excerpt(last?.text ?? '')}" (${last?.error ?? 'unknown problem'})`,
    1,
    'a stronger or instruction-tuned model usually fixes this (--model, or a per-role model flag)',
  );
}

function defaultFeedback(error: string): string {
  return `Your answer could not be used: ${error}\nAnswer again, correcting this, and follow the required format exactly.`;
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 60 ? `${flat.slice(0, 60)}…` : flat;
}
