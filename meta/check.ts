/**
 * `design --check N`: simulated conversations with the designed agent (the engine's user simulation),
 * then a repair pass for the nodes whose transitions the classifier got wrong. The userbot follows a
 * node's user instruction for a sampled transition; when the classifier takes another transition, that
 * node's question or choices do not tell the replies apart, which is what the repair is asked to fix.
 */
import type { AgentOpener } from '../src/engine/agent-opener.js';
import { EventBus } from '../src/events.js';
import { seededRandom, simulateConversations, type SimulationReport } from '../src/engine/simulate.js';
import { isChatAction } from '../src/graph/parse.js';
import type { GraphFile, NodeSpec } from '../src/graph/schema.js';
import { StaticGraph } from '../src/graph/view.js';
import type { ModelSet } from '../src/llm/types.js';
import type { Complaint } from './repair.js';

/** Figures of a check. */
export interface CheckFigures {
  conversations: number;
  /** Chat-node transitions taken at least once, and how many there are. */
  edgesCovered: number;
  edges: number;
  /** Classifier decisions that took the transition the simulated user meant, and how many were checked. */
  agreed: number;
  decisions: number;
}

/** What a check found: its figures and one complaint per wrong classifier decision. */
export interface CheckResult {
  figures: CheckFigures;
  complaints: Complaint[];
}

/** Runs `conversations` simulated conversations of up to `turns` user replies each. */
export async function checkGraph(
  file: GraphFile,
  options: { models: ModelSet; open: AgentOpener; conversations: number; turns: number; seed: number },
): Promise<CheckResult> {
  // A bus of its own: the designed graph's node events must not reach listeners of the designer's run.
  const interpreter = await options.open({
    graph: new StaticGraph(file),
    models: options.models,
    events: new EventBus(),
  });
  try {
    const report = await simulateConversations(interpreter, {
      count: options.conversations,
      turns: options.turns,
      rng: seededRandom(options.seed),
    });
    return { figures: figuresOf(file, report), complaints: complaintsOf(file, report) };
  } finally {
    interpreter.dispose();
  }
}

function figuresOf(file: GraphFile, report: SimulationReport): CheckFigures {
  const chatNodes = file.nodes.filter((n) => isChatAction(n.action));
  const edges = chatNodes.reduce((sum, n) => sum + n.transitions.length, 0);
  const perNode = Object.values(report.nodes);
  return {
    conversations: report.conversations.length,
    edgesCovered: edges - report.neverCovered.length,
    edges,
    agreed: perNode.reduce((sum, n) => sum + n.agreed, 0),
    decisions: perNode.reduce((sum, n) => sum + n.samples, 0),
  };
}

/** One complaint per disagreement, quoting the user's reply and both choices, so the fix is concrete. */
function complaintsOf(file: GraphFile, report: SimulationReport): Complaint[] {
  const byName = new Map(file.nodes.map((n) => [n.name, n]));
  return report.conversations.flatMap((conversation) =>
    conversation.turns.flatMap((turn) => {
      if (turn.agreed !== false || turn.sampled === undefined) return [];
      const node = byName.get(turn.node);
      return node
        ? [{ node: turn.node, problem: disagreement(node, turn.user, turn.sampled, turn.taken) }]
        : [];
    }),
  );
}

function disagreement(node: NodeSpec, reply: string, meant: number, taken: number | undefined): string {
  const choice = (i: number | undefined) =>
    i === undefined ? 'none of the choices' : `"${node.transitionChoices[i] ?? node.transitions[i]}"`;
  return (
    `a simulated user told to "${node.userInstructions[meant] ?? ''}" replied "${reply}"; to the question ` +
    `"${node.transitionQuestion ?? ''}" that should be answered ${choice(meant)}, but the classifier chose ${choice(taken)}. ` +
    'Make the question and choices tell such replies apart.'
  );
}
