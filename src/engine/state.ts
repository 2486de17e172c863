/**
 * The whole state of a conversation with an autogram, as plain JSON: the stack of frames and where the run
 * stands. It is saved after any reply and loaded in another process to continue, so nothing here may hold
 * functions, class instances or references into the interpreter. What grows with the conversation is only
 * its turns; logs of what happened (nodes entered, model calls) are events, for the trace.
 */
import { z } from 'zod';
import { aiplStateSchema, copyAiplState, newAiplState, type AiplState } from '../aipl/state.js';
import { UserError } from '../errors.js';
import { withoutBom } from '../graph/json-syntax.js';
import type { GraphView } from '../graph/view.js';
import { nameTable } from './tables.js';

export const STATE_FORMAT = 'meta-agent/state@2';

/** States saved before 0.2 kept logs of nodes entered and model calls; loading one drops the logs. */
const LOGGED_STATE_FORMAT = 'meta-agent/state@1';

/** How a frame was entered: the root conversation, or one of the three function kinds. */
export type ScopeKind = 'root' | 'function' | 'local_function' | 'global_function';

/**
 * One chat or thought node's model turn, kept for prompt formation (seed 001). `userReply` is the user
 * reply this node consumed (it came immediately after it), or '' when none did. A turn is never changed
 * once recorded: copies of a state share their turns.
 */
export interface Turn {
  node: string;
  kind: 'chat' | 'thought';
  /** The instruction as the model saw it, `$var`s embedded. */
  instruction: string;
  userReply: string;
  output: string;
  /**
   * Whether later prompts show this turn's instruction (AutoGRAMS' `retain_instruction`); absent in
   * states saved before it was recorded.
   */
  retain?: boolean;
}

/** One layer of the memory stack. A function call pushes one; a return pops it. */
export interface Frame {
  scope: ScopeKind;
  variables: Record<string, unknown>;
  turns: Turn[];
  /** The chatbot's initial prompt in this frame (set_prompt / append_prompt change it). */
  prompt: string;
  /** The simulated user's initial prompt in this frame. */
  userPrompt: string;
  /** The function node that pushed this frame; absent for the root and for a call from the host (applyFn). */
  caller?: string;
  /** The caller's variable that receives the returned value. */
  assignTo?: string;
  /** Output of the last node run in this frame: what a bare `return` returns. */
  lastOutput?: unknown;
  /**
   * The agent's reply at the last node run in this frame other than a `transition` node: a chat or
   * thought node's text, '' after any other node (AutoGRAMS records every node but a transition node as
   * a turn, with an empty reply unless a model or chat_exact wrote one); absent until one has run. It is
   * a transition node's output, as AutoGRAMS' `get_last_reply` gives it (autograms/memory.py:95-104).
   */
  lastReply?: string;
}

export interface ConversationState {
  format: typeof STATE_FORMAT;
  /** Name of the graph the conversation runs. */
  graphName: string;
  /** The graph version of the last step (a self-editing graph changes between steps). */
  graphVersion: number;
  stack: Frame[];
  /** The node run last, whose transition is still to be taken; absent before the first reply. */
  current?: string;
  /** A user reply no chat or thought node has consumed yet. */
  pendingUser: string;
  /** Times each node was entered (drives `name.n` transitions). */
  visits: Record<string, number>;
  /** Nodes entered so far. */
  steps: number;
  /** For each node entered, the step (1 = the first) at which it was entered last (drives `requiredRevisit`). */
  lastEntered: Record<string, number>;
  ended: boolean;
  /** The AIPL state (an append-only log of answers), in conversations with a graph whose config.aipl is set. */
  aipl?: AiplState;
  /** Reserved for a snapshot of a self-editing graph (VersionedGraph.toJSON), stored by self-referential runs. */
  graph?: unknown;
}

/**
 * A table of names as JSON holds it, read into a table without a prototype (tables.ts). Not `z.record`:
 * that drops a `__proto__` key without checking its value.
 */
function nameTableSchema<T>(value: z.ZodType<T>) {
  return z.unknown().transform((input, ctx) => {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      ctx.addIssue({ code: 'custom', message: 'expected an object' });
      return z.NEVER;
    }
    const table = nameTable<T>();
    for (const [name, entry] of Object.entries(input)) {
      const parsed = value.safeParse(entry);
      if (!parsed.success) {
        ctx.addIssue({ code: 'custom', path: [name], message: parsed.error.issues[0]?.message ?? 'invalid' });
        return z.NEVER;
      }
      table[name] = parsed.data;
    }
    return table;
  });
}

const turnSchema = z.object({
  node: z.string(),
  kind: z.enum(['chat', 'thought']),
  instruction: z.string(),
  userReply: z.string(),
  output: z.string(),
  retain: z.boolean().optional(),
});

export const frameSchema = z.object({
  scope: z.enum(['root', 'function', 'local_function', 'global_function']),
  variables: nameTableSchema(z.unknown()),
  turns: z.array(turnSchema),
  prompt: z.string(),
  userPrompt: z.string(),
  caller: z.string().optional(),
  assignTo: z.string().optional(),
  lastOutput: z.unknown().optional(),
  lastReply: z.string().optional(),
});

const count = z.number().int().nonnegative();

export const stateSchema = z.object({
  format: z.literal(STATE_FORMAT),
  graphName: z.string(),
  graphVersion: count,
  stack: z.array(frameSchema).min(1),
  current: z.string().optional(),
  pendingUser: z.string(),
  visits: nameTableSchema(count),
  steps: count,
  lastEntered: nameTableSchema(count),
  ended: z.boolean(),
  aipl: aiplStateSchema.optional(),
  graph: z.unknown().optional(),
});

/** A state of the earlier format: its log of nodes entered gives the steps and last entries. */
const loggedStateSchema = stateSchema.omit({ steps: true, lastEntered: true }).extend({
  format: z.literal(LOGGED_STATE_FORMAT),
  visited: z.array(z.object({ node: z.string() })),
});

function fromLoggedState({ visited, ...rest }: z.infer<typeof loggedStateSchema>): ConversationState {
  const lastEntered = nameTable<number>();
  visited.forEach(({ node }, i) => (lastEntered[node] = i + 1));
  return { ...rest, format: STATE_FORMAT, steps: visited.length, lastEntered } as ConversationState;
}

/** A fresh conversation on `graph`: one root frame with the graph's prompts, nothing run yet. */
export function newState(graph: GraphView): ConversationState {
  return {
    format: STATE_FORMAT,
    graphName: graph.name,
    graphVersion: graph.version,
    stack: [
      {
        scope: 'root',
        variables: nameTable(),
        turns: [],
        prompt: graph.config.prompt,
        userPrompt: graph.config.userPrompt,
      },
    ],
    pendingUser: '',
    visits: nameTable(),
    steps: 0,
    lastEntered: nameTable(),
    ended: false,
    ...(graph.config.aipl && { aipl: newAiplState() }),
  };
}

/**
 * A copy of `state` to work on, which the run can change without changing `state`. Only what a run
 * changes in place is copied (the frames, their variable tables and turn lists, the counters); turns
 * and variable values are shared, as nothing changes them once stored, so the copy costs little more
 * at the 10 000th turn than at the first (AIPL's log, like the turn lists, is copied by reference to its
 * entries).
 */
export function workingCopy(state: ConversationState): ConversationState {
  return {
    ...state,
    stack: state.stack.map((frame) => ({
      ...frame,
      variables: nameTable(frame.variables),
      turns: [...frame.turns],
    })),
    visits: nameTable(state.visits),
    lastEntered: nameTable(state.lastEntered),
    ...(state.aipl && { aipl: copyAiplState(state.aipl) }),
  };
}

/** Serializes a state for a file; `loadState` reads it back. */
export function saveState(state: ConversationState): string {
  return JSON.stringify(state, null, 2) + '\n';
}

/** Parses and checks a saved state. A file that is not one ends in a UserError saying what is wrong. */
export function loadState(text: string, source = 'state'): ConversationState {
  let json: unknown;
  try {
    json = JSON.parse(withoutBom(text));
  } catch (error) {
    throw new UserError(`${source} is not JSON: ${(error as Error).message}`, 2);
  }
  return parseState(json, source);
}

/** Checks that a parsed JSON value is a conversation state (of this format or the one before). */
export function parseState(json: unknown, source = 'state'): ConversationState {
  const logged = loggedStateSchema.safeParse(json);
  if (logged.success) return fromLoggedState(logged.data);
  const result = stateSchema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue?.path.length ? ` at ${issue.path.join('.')}` : '';
    throw new UserError(
      `${source} is not a meta-agent conversation state (${STATE_FORMAT})${where}: ${issue?.message ?? 'invalid'}`,
      2,
    );
  }
  return result.data as ConversationState;
}

/** The nodes a state stands at: the node run last and every function node waiting for a return. */
export function standingNodes(state: ConversationState): string[] {
  const callers = state.stack.flatMap((frame) => (frame.caller === undefined ? [] : [frame.caller]));
  return state.current === undefined ? callers : [...callers, state.current];
}

/**
 * Why `state` cannot go on with `graph`, worded to follow the state's name ("chat.state holds …"), or
 * undefined when it can: it is a conversation with another graph, or it stands at nodes the graph does
 * not have (the file was edited since).
 */
export function stateMismatch(
  state: ConversationState,
  graph: Pick<GraphView, 'name' | 'get'>,
): string | undefined {
  if (state.graphName !== graph.name)
    return `holds a conversation with the graph "${state.graphName}", not "${graph.name}"`;
  const missing = standingNodes(state).find((name) => !graph.get(name));
  if (missing !== undefined)
    return `stands at node "${missing}", which the graph "${graph.name}" does not have (was the graph edited since?)`;
  return undefined;
}

/** The frame on top of the stack: where the running node's variables and turns go. */
export function topFrame(state: ConversationState): Frame {
  return state.stack[state.stack.length - 1]!;
}
