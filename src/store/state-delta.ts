/**
 * What one reply changed in a conversation state, small enough to append to a journal after every reply:
 * everything but the turns recorded before it, which stay as they were (a turn is never changed once
 * recorded, and a frame's turns only grow), and the AIPL log's entries before it (the log only grows).
 * Its size depends on the graph (variables, visit counts), not on how long the conversation has run.
 */
import { z } from 'zod';
import { aiplStateSchema, type AiplState } from '../aipl/state.js';
import { frameSchema, stateSchema, type ConversationState, type Frame, type Turn } from '../engine/state.js';

/** A frame as a delta gives it: its first `keep` turns are those of the frame at its place before. */
export type FrameDelta = Omit<Frame, 'turns'> & { keep: number; turns: Turn[] };

/** The AIPL state as a delta gives it: its log's first `keep` entries are those before. */
export type AiplDelta = AiplState & { keep: number };

export type StateDelta = Omit<ConversationState, 'stack' | 'aipl'> & {
  stack: FrameDelta[];
  aipl?: AiplDelta;
};

const keep = z.number().int().nonnegative();

const stateDeltaSchema = stateSchema.extend({
  stack: z.array(frameSchema.extend({ keep })).min(1),
  aipl: aiplStateSchema.extend({ keep }).optional(),
});

/**
 * The delta from `before` to `after`, where `after` came from `before` by running replies on a working
 * copy (see workingCopy): the turns both share are recognised by identity, and a frame whose turns are
 * not a continuation of those before it is written whole.
 */
export function stateDelta(before: ConversationState, after: ConversationState): StateDelta {
  const { aipl, ...rest } = after;
  const delta: StateDelta = {
    ...rest,
    stack: after.stack.map((frame, i) => {
      const kept = before.stack[i]?.turns ?? [];
      const keep = continues(kept, frame.turns) ? kept.length : 0;
      return { ...frame, keep, turns: frame.turns.slice(keep) };
    }),
  };
  if (aipl) {
    const kept = before.aipl?.log ?? [];
    const keep = continues(kept, aipl.log) ? kept.length : 0;
    delta.aipl = { turn: aipl.turn, keep, log: aipl.log.slice(keep) };
  }
  return delta;
}

function continues<T>(before: readonly T[], after: readonly T[]): boolean {
  const last = before.length - 1;
  return before.length <= after.length && (last < 0 || before[last] === after[last]);
}

/**
 * Checks a parsed JSON value is a delta and applies it to `state`, whose turn lists it takes over (so
 * replaying a journal costs what its deltas hold, not what the conversation does). Throws a plain Error
 * saying what is wrong; the caller knows the file and line.
 */
export function applyDelta(state: ConversationState, json: unknown): ConversationState {
  const parsed = stateDeltaSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${issue?.path.join('.') || 'the line'}: ${issue?.message ?? 'not a state delta'}`);
  }
  const { aipl, ...delta } = parsed.data as StateDelta;
  const next: ConversationState = {
    ...delta,
    stack: delta.stack.map(({ keep, turns, ...frame }, i) => ({
      ...frame,
      turns: extended(state.stack[i]?.turns ?? [], keep, turns, `stack.${i}.keep`, 'turns of a frame'),
    })),
  };
  if (aipl) {
    const log = extended(state.aipl?.log ?? [], aipl.keep, aipl.log, 'aipl.keep', 'entries of a log');
    next.aipl = { turn: aipl.turn, log };
  }
  return next;
}

/** `kept` cut to its first `keep` items and then `added`, in place. */
function extended<T>(kept: T[], keep: number, added: readonly T[], field: string, what: string): T[] {
  if (keep > kept.length) throw new Error(`${field}: keeps ${keep} ${what} that had ${kept.length}`);
  kept.length = keep;
  for (const item of added) kept.push(item);
  return kept;
}
