/**
 * The frame stack and its scope rules (paper §2.5.3, §4.2). Reads walk down from the top frame and stop after
 * the first `local_function` frame, which cuts off everything below it. Writes go to the top frame. On
 * return, a `global_function` frame merges its variables, turns and prompts into the caller's frame; a
 * `function` (mixed) or `local_function` frame simply vanishes, so only the returned value survives.
 */
import { valuesByNamespace } from '../aipl/state.js';
import type { ConversationState, Frame, ScopeKind, Turn } from './state.js';
import { topFrame } from './state.js';
import { mergedTable, nameTable } from './tables.js';

/** Frames in scope, bottom first: the top frame down to (and including) the nearest local_function frame. */
export function visibleFrames(state: ConversationState): Frame[] {
  const frames: Frame[] = [];
  for (let i = state.stack.length - 1; i >= 0; i--) {
    const frame = state.stack[i]!;
    frames.unshift(frame);
    if (frame.scope === 'local_function') break;
  }
  return frames;
}

/**
 * Every variable in scope; a frame higher in the stack shadows the same name lower down. In a conversation
 * with AIPL state, `aipl` holds its latest values as `aipl.ns.key`, beneath every frame (a variable of the
 * graph's own named `aipl` hides it).
 *
 * Read it at once and never change it: where one frame is in scope (a conversation's root, a local
 * function) it is that frame's own table, not a copy, since copying a conversation's variables for every
 * code node, condition and template cost more than the rest of the step.
 */
export function variablesInScope(state: ConversationState): Readonly<Record<string, unknown>> {
  // One frame in scope, as in a conversation's root or a local function: asked for at every node.
  const top = state.stack[state.stack.length - 1];
  if (!state.aipl && (state.stack.length === 1 || top?.scope === 'local_function')) return top!.variables;
  const frames = visibleFrames(state);
  const tables = frames.map((f) => f.variables);
  if (state.aipl) tables.unshift({ [AIPL_VARIABLE]: valuesByNamespace(state.aipl.log) });
  return mergedTable(tables);
}

/** The variable through which autogram code and `$var`s read the AIPL state. */
const AIPL_VARIABLE = 'aipl';

/** Chat and thought turns in scope, oldest first. */
export function turnsInScope(state: ConversationState): Turn[] {
  return visibleFrames(state).flatMap((f) => f.turns);
}

/**
 * Chat and thought turns in scope, newest first: what a prompt with a history window reads, stopping
 * when the window is full, so its cost does not grow with the conversation.
 */
export function* turnsNewestFirst(state: ConversationState): Generator<Turn> {
  for (let i = state.stack.length - 1; i >= 0; i--) {
    const frame = state.stack[i]!;
    for (let j = frame.turns.length - 1; j >= 0; j--) yield frame.turns[j]!;
    if (frame.scope === 'local_function') return;
  }
}

/** Stores a variable in the top frame. */
export function setVariable(state: ConversationState, name: string, value: unknown): void {
  topFrame(state).variables[name] = value;
}

/** What a function call needs to push its frame. */
export interface CallFrame {
  scope: Exclude<ScopeKind, 'root'>;
  /** Parameter name -> argument value. */
  args: Record<string, unknown>;
  caller?: string;
  assignTo?: string;
  /** The graph's configured prompts: a local function starts from these, not from its caller's. */
  defaults: { prompt: string; userPrompt: string };
}

/** Pushes a function's frame. Mixed and global functions inherit the caller's prompts; local ones start afresh. */
export function pushFrame(state: ConversationState, call: CallFrame): void {
  const below = topFrame(state);
  const prompts = call.scope === 'local_function' ? call.defaults : below;
  const frame: Frame = {
    scope: call.scope,
    variables: nameTable(call.args),
    turns: [],
    prompt: prompts.prompt,
    userPrompt: prompts.userPrompt,
  };
  if (call.caller !== undefined) frame.caller = call.caller;
  if (call.assignTo !== undefined) frame.assignTo = call.assignTo;
  state.stack.push(frame);
}

/** Pops the top frame, applying its scope's merge rule, and returns it (for its caller and assign-to). */
export function popFrame(state: ConversationState): Frame {
  if (state.stack.length < 2) throw new Error('popFrame on the root frame');
  const frame = state.stack.pop()!;
  if (frame.scope === 'global_function') {
    const caller = topFrame(state);
    Object.assign(caller.variables, frame.variables);
    caller.turns.push(...frame.turns);
    caller.prompt = frame.prompt;
    caller.userPrompt = frame.userPrompt;
  }
  return frame;
}
