/**
 * What a conversation saved by an earlier session (`chat --state FILE`) shows before anything runs:
 * the transcript so far and where it stands. The state keeps the chat and thought turns the prompts
 * need, not the events that produced them, so a resumed transcript lists replies and thoughts only; a
 * function's turns are gone once it has returned, unless it was a global function, which hands them to
 * its caller.
 */
import type { ConversationState } from '../engine/state.js';
import { aiplViewOf } from './aipl-view.js';
import type { Decision, RunState, TranscriptEntry } from './run-state.js';

/** The parts of the run state a saved conversation fills in. */
export type ResumedRun = Pick<RunState, 'transcript' | 'current' | 'visited' | 'aipl'>;

/**
 * The transcript of `state`'s turns, oldest first: the user reply each turn consumed, then the agent's
 * reply, with the thoughts since the previous reply folded under it as its decisions. The AIPL values
 * are the latest of its log.
 */
export function resumedRun(state: ConversationState): ResumedRun {
  const transcript: TranscriptEntry[] = [];
  let thoughts: Decision[] = [];
  for (const turn of state.stack.flatMap((frame) => frame.turns)) {
    if (turn.userReply) transcript.push({ id: transcript.length, kind: 'user', text: turn.userReply });
    if (turn.kind === 'thought') {
      thoughts.push({ kind: 'thought', node: turn.node, text: turn.output });
      continue;
    }
    transcript.push({
      id: transcript.length,
      kind: 'agent',
      node: turn.node,
      text: turn.output,
      decisions: thoughts,
    });
    thoughts = [];
  }
  const visited = new Set(Object.keys(state.visits).filter((node) => state.visits[node]! > 0));
  return {
    transcript,
    current: state.current,
    visited,
    ...(state.aipl ? { aipl: aiplViewOf(state.aipl) } : {}),
  };
}
