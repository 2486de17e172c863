/**
 * User simulation (paper Appendix D; `simulate_user` in autograms/autogram.py). At each chat node the
 * simulated user either interjects (each interjection node with a user instruction is tried with its
 * probability) or follows one of the node's transitions, sampled by the node's `transitionProbs` (or
 * with equal weights) among those with a user instruction. The userbot replies as the user following
 * that instruction; an instruction equal to the config's end signal (`<end>`) ends the conversation
 * instead. If the userbot and the classifier both work, the classifier then takes the sampled
 * transition: agreement per node measures that, and edges never taken show what the conversations did
 * not cover.
 */
import type { AgentEvent } from '../events.js';
import type { CompiledNode } from '../graph/parse.js';
import type { GraphView } from '../graph/view.js';
import type { Interpreter } from './interpreter.js';
import { generationOf } from './model-calls.js';
import { userbotPrompt, type Exchange } from './prompt.js';
import { stripSpeakerLabel } from './reply-text.js';
import { topFrame, type ConversationState } from './state.js';
import { isChatNode, planTransition } from './transitions.js';
import { nameTable } from './tables.js';

/** A random source in [0, 1). */
export type Random = () => number;

/** A small seeded generator (mulberry32): the same seed gives the same simulated conversations. */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The random source of conversation `index` (from 1) of a simulation seeded with `seed`: each
 * conversation has its own, so one can be simulated apart from the others (on another machine, or
 * again after a stop) and still sample what it would have in a run of them all.
 */
export function conversationRandom(seed: number, index: number): Random {
  return seededRandom((seed ^ Math.imul(index, 0x9e3779b9)) >>> 0);
}

export interface SimulationOptions {
  /** User replies per conversation at most. */
  turns: number;
  rng: Random;
}

/** One user reply of a simulated conversation and what became of it. */
export interface SimulatedTurn {
  /** The chat node the user answered. */
  node: string;
  /** Index of the sampled transition, when one with a user instruction existed. */
  sampled?: number;
  /** Index of the transition the interpreter took; undefined when an interjection took over. */
  taken?: number;
  /** Whether the classifier took the sampled transition; undefined when nothing was sampled or no question was asked. */
  agreed?: boolean;
  user: string;
  /** The agent's answer ('' when the conversation ended). */
  agent: string;
}

export interface SimulatedConversation {
  /** The agent's opening reply. */
  opening: string;
  turns: SimulatedTurn[];
  /** What ended it, if anything did before the turn limit: a `quit` transition, or the user's end signal. */
  endedBy?: 'quit' | 'user';
  state: ConversationState;
}

/** Used when a chat node gives no user instruction for any of its transitions. */
const FREE_REPLY = 'Reply to the agent as the user would.';

/**
 * AutoGRAMS' defaults for simulating interjections (autograms/autogram_config.py
 * `default_probability_interjection`; `simulate_interjections` in autograms/autogram_utils.py waits this
 * many agent replies before an interjection that ends the conversation).
 */
const INTERJECTION_PROBABILITY = 0.01;
const TURNS_BEFORE_ENDING_INTERJECTION = 3;

/** What the simulated user does next: follow a transition, interject, or end the conversation. */
interface UserMove {
  instruction: string;
  /** Index of the sampled transition; absent for an interjection or a free reply. */
  sampled?: number;
}

/** Runs one conversation between the agent and the userbot. */
export async function simulateConversation(
  interpreter: Interpreter,
  options: SimulationOptions,
): Promise<SimulatedConversation> {
  const first = await interpreter.reply(undefined);
  let state = first.state;
  let endedBy: SimulatedConversation['endedBy'] = first.ended ? 'quit' : undefined;
  const exchanges: Exchange[] = [{ agent: first.reply }];
  const turns: SimulatedTurn[] = [];
  for (let t = 0; t < options.turns && !endedBy; t++) {
    const node = interpreter.graph.get(state.current ?? '');
    if (!node) break;
    const move = nextMove(
      interpreter.graph,
      node,
      { agentReplies: t + 1, lastTurn: t + 1 === options.turns },
      options.rng,
    );
    if (move.instruction === interpreter.graph.config.endSignal) {
      endedBy = 'user';
      break;
    }
    const user = await askUserbot(interpreter, state, exchanges, move.instruction);
    exchanges[exchanges.length - 1]!.user = user;

    const taken = await watchTransition(interpreter, node, state, () => interpreter.reply(user, state));
    state = taken.result.state;
    if (taken.result.ended) endedBy = 'quit';
    exchanges.push({ agent: taken.result.reply });
    const turn: SimulatedTurn = { node: node.name, user, agent: taken.result.reply };
    if (move.sampled !== undefined) turn.sampled = move.sampled;
    if (taken.index !== undefined) turn.taken = taken.index;
    if (move.sampled !== undefined && taken.asked) turn.agreed = taken.index === move.sampled;
    turns.push(turn);
  }
  return { opening: first.reply, turns, ...(endedBy && { endedBy }), state };
}

/**
 * The simulated user's next move at chat node `node`. Interjection nodes with a user instruction come
 * first, each with its probability; one whose own simulation ends the conversation (its first user
 * instruction is the end signal, or its instruction is `quit`) waits for a few replies, and is taken
 * for certain on the last turn, so a conversation can end the way its author planned.
 */
function nextMove(
  graph: GraphView,
  node: CompiledNode,
  turn: { agentReplies: number; lastTurn: boolean },
  rng: Random,
): UserMove {
  const endSignal = graph.config.endSignal;
  for (const candidate of graph.nodes()) {
    const instruction = candidate.userInterjection?.trim();
    if (!candidate.isInterjection || !instruction) continue;
    const ending =
      candidate.userInstructions[0]?.trim() === endSignal || candidate.instruction.trim() === 'quit';
    const probability = candidate.probabilityInterjection ?? INTERJECTION_PROBABILITY;
    if (
      ending
        ? turn.lastTurn || (turn.agentReplies >= TURNS_BEFORE_ENDING_INTERJECTION && rng() < probability)
        : !turn.lastTurn && rng() < probability
    )
      return { instruction };
  }
  const weights = transitionWeights(node).map((weight, i) => (node.userInstructions[i]?.trim() ? weight : 0));
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  if (total === 0) return { instruction: FREE_REPLY };
  let point = rng() * total;
  const sampled = weights.findIndex((weight) => (point -= weight) < 0);
  const index = sampled < 0 ? weights.findLastIndex((weight) => weight > 0) : sampled;
  return { instruction: node.userInstructions[index]!.trim(), sampled: index };
}

/**
 * The node's `transitionProbs`, or equal weights. AutoGRAMS favours the first transition by default
 * (`default_primary_prob_detla`); equal weights cover a graph's edges sooner, which is what `simulate`
 * and `design --check` measure.
 */
function transitionWeights(node: CompiledNode): number[] {
  if (node.transitionProbs?.length === node.transitions.length) return node.transitionProbs;
  return node.transitions.map(() => 1);
}

async function askUserbot(
  interpreter: Interpreter,
  state: ConversationState,
  exchanges: readonly Exchange[],
  instruction: string,
): Promise<string> {
  const config = interpreter.graph.config;
  const messages = userbotPrompt(config, topFrame(state).userPrompt, exchanges, instruction);
  const model = interpreter.models.userbot;
  const completion = await model.complete({ messages, purpose: 'simulated user', ...generationOf(config) });
  return stripSpeakerLabel(completion.text, [`${config.userName}'s reply`, config.userName]);
}

/**
 * Runs `reply` while watching the first transition out of the chat node `node`, and maps it back to the
 * index of the node's transition it took.
 */
async function watchTransition<T>(
  interpreter: Interpreter,
  node: CompiledNode,
  before: ConversationState,
  reply: () => Promise<T>,
): Promise<{ result: T; index?: number; asked: boolean }> {
  let event: Extract<AgentEvent, { type: 'transition' }> | undefined;
  const off = interpreter.events.on((e) => {
    if (!event && e.type === 'transition' && e.from === node.name) event = e;
  });
  try {
    const result = await reply();
    if (!event || event.kind === 'interjection') return { result, asked: event !== undefined };
    if (node.transitions.length === 1) return { result, index: 0, asked: false };
    const plan = planTransition(interpreter.graph, node, before);
    if (plan.kind !== 'ask') return { result, asked: false };
    const choice = plan.question.choices.indexOf(event.answer ?? '');
    return choice < 0 ? { result, asked: true } : { result, index: plan.order[choice]!, asked: true };
  } finally {
    off();
  }
}

/** Agreement and coverage over many simulated conversations. */
export interface SimulationReport {
  conversations: SimulatedConversation[];
  /** Per chat node: classifier decisions checked against a sampled transition, and how many agreed. */
  nodes: Record<string, { samples: number; agreed: number }>;
  /** Transitions of chat nodes (with a user instruction, when the node gives any) never taken. */
  neverCovered: { node: string; transition: string }[];
}

/** Runs `count` simulated conversations and aggregates agreement per node and edge coverage. */
export async function simulateConversations(
  interpreter: Interpreter,
  options: SimulationOptions & { count: number },
): Promise<SimulationReport> {
  const conversations: SimulatedConversation[] = [];
  for (let i = 0; i < options.count; i++)
    conversations.push(await simulateConversation(interpreter, options));

  const nodes: SimulationReport['nodes'] = nameTable();
  const taken = new Set<string>();
  for (const turn of conversations.flatMap((c) => c.turns)) {
    if (turn.taken !== undefined) taken.add(`${turn.node}\u0000${turn.taken}`);
    if (turn.agreed === undefined) continue;
    const entry = (nodes[turn.node] ??= { samples: 0, agreed: 0 });
    entry.samples += 1;
    if (turn.agreed) entry.agreed += 1;
  }
  const neverCovered = interpreter.graph
    .nodes()
    .filter(isChatNode)
    .flatMap((node) => {
      const withInstructions = node.transitions.some((_, i) => node.userInstructions[i]?.trim());
      return node.transitions.flatMap((transition, i) =>
        (withInstructions && !node.userInstructions[i]?.trim()) || taken.has(`${node.name}\u0000${i}`)
          ? []
          : [{ node: node.name, transition }],
      );
    });
  return { conversations, nodes, neverCovered };
}
