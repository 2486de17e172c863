/**
 * What one reply changed in a conversation state, small enough to append to a journal after every reply:
 * everything but the turns recorded before it, which stay as they were (a turn is never changed once
 * recorded, and a frame's turns only grow). Its size depends on the graph (variables, visit counts), not
 * on how long the conversation has run.
 */
import { z } from 'zod';
import { frameSchema, stateSchema, type ConversationState, type Frame, type Turn } from './state.js';

/** A frame as a delta gives it: its first `keep` turns are those of the frame at its place before. */
export type FrameDelta = Omit<Frame, 'turns'> & { keep: number; turns: Turn[] };

export type StateDelta = Omit<ConversationState, 'stack'> & { stack: FrameDelta[] };

const stateDeltaSchema = stateSchema.extend({
  stack: z.array(frameSchema.extend({ keep: z.number().int().nonnegative() })).min(1),
});

/**
 * The delta from `before` to `after`, where `after` came from `before` by running replies on a working
 * copy (see workingCopy): the turns both share are recognised by identity, and a frame whose turns are
 * not a continuation of those before it is written whole.
 */
export function stateDelta(before: ConversationState, after: ConversationState): StateDelta {
  return {
    ...after,
    stack: after.stack.map((frame, i) => {
      const kept = before.stack[i]?.turns ?? [];
      const keep = continues(kept, frame.turns) ? kept.length : 0;
      return { ...frame, keep, turns: frame.turns.slice(keep) };
    }),
  };
}

function continues(before: readonly Turn[], after: readonly Turn[]): boolean {
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
  const delta = parsed.data as StateDelta;
  return {
    ...delta,
    stack: delta.stack.map(({ keep, turns, ...frame }, i) => {
      const kept = state.stack[i]?.turns ?? [];
      if (keep > kept.length)
        throw new Error(`stack.${i}.keep: keeps ${keep} turns of a frame that had ${kept.length}`);
      kept.length = keep;
      for (const turn of turns) kept.push(turn);
      return { ...frame, turns: kept };
    }),
  };
}
