/**
 * What `meta-agent simulate` reports: simulated conversations, each finished one reported as progress,
 * folded into one summary of classifier agreement per node and edges never covered, as a
 * readable table or as JSON.
 */
import type { SimulatedConversation, SimulationReport } from '../engine/simulate.js';
import { isChatNode } from '../engine/transitions.js';
import type { GraphView } from '../graph/view.js';

/**
 * One finished conversation as the report folds it: the conversation (its state left out) and its
 * agreement and coverage (a SimulationReport of one).
 */
export interface FinishedConversation extends Pick<SimulationReport, 'nodes' | 'neverCovered'> {
  conversation: Omit<SimulatedConversation, 'state'>;
}

/** A report of one conversation as the report folds it. */
export function finishedOf(report: SimulationReport): FinishedConversation {
  const { state: _state, ...conversation } = report.conversations[0]!;
  return { conversation, nodes: report.nodes, neverCovered: report.neverCovered };
}

/** Agreement at one chat node whose transition the classifier chooses. */
export interface NodeAgreement {
  node: string;
  /** Classifier decisions checked against the transition the simulated user aimed at. */
  samples: number;
  agreed: number;
}

/** The whole run, as `--json` prints it (transcripts aside). */
export interface SimulationSummary {
  graph: string;
  seed: number;
  conversations: number;
  /** User replies per conversation at most. */
  turns: number;
  nodes: NodeAgreement[];
  neverCovered: { node: string; transition: string }[];
}

/**
 * Folds reports of single conversations into one. An edge was never covered when no conversation took
 * it: when it is in every report's `neverCovered`. Chat nodes that ask the classifier but were never
 * sampled are listed with zero samples, so a node the simulation missed shows.
 */
export function summarize(
  graph: GraphView,
  reports: readonly Pick<SimulationReport, 'nodes' | 'neverCovered'>[],
  run: { seed: number; turns: number },
): SimulationSummary {
  const totals = new Map<string, NodeAgreement>();
  for (const node of graph.nodes())
    if (isChatNode(node) && node.transitions.length > 1)
      totals.set(node.name, { node: node.name, samples: 0, agreed: 0 });
  for (const report of reports)
    for (const [node, { samples, agreed }] of Object.entries(report.nodes)) {
      const entry = totals.get(node) ?? { node, samples: 0, agreed: 0 };
      entry.samples += samples;
      entry.agreed += agreed;
      totals.set(node, entry);
    }
  const key = (edge: { node: string; transition: string }) => `${edge.node}\u0000${edge.transition}`;
  const neverCovered = (reports[0]?.neverCovered ?? []).filter((edge) =>
    reports.every((report) => report.neverCovered.some((other) => key(other) === key(edge))),
  );
  return {
    graph: graph.name,
    seed: run.seed,
    conversations: reports.length,
    turns: run.turns,
    nodes: [...totals.values()],
    neverCovered,
  };
}

/** The readable report: a header, the agreement table and the uncovered edges. */
export function formatSummary(summary: SimulationSummary): string {
  const noun = summary.conversations === 1 ? 'conversation' : 'conversations';
  const lines = [
    `${summary.graph}: ${summary.conversations} simulated ${noun} of up to ${summary.turns} user replies (seed ${summary.seed})`,
    '',
  ];
  if (summary.nodes.length === 0) lines.push('no chat node asks the classifier to choose a transition');
  else {
    lines.push('classifier agreement with the transition the simulated user aimed at:');
    const rows = summary.nodes.map(({ node, samples, agreed }) => [
      node,
      String(samples),
      samples ? String(agreed) : '-',
      samples ? `${Math.round((100 * agreed) / samples)}%` : '-',
    ]);
    lines.push(...table([['node', 'samples', 'agreed', 'agreement'], ...rows]).map((row) => `  ${row}`));
  }
  lines.push('');
  if (summary.neverCovered.length === 0)
    lines.push('every transition of a chat node was taken at least once');
  else {
    const count = summary.neverCovered.length;
    lines.push(`never covered (${count} ${count === 1 ? 'edge' : 'edges'}):`);
    lines.push(...summary.neverCovered.map(({ node, transition }) => `  ${node} -> ${transition}`));
  }
  return lines.join('\n');
}

/** One conversation as `--json` lists it: transitions named, states left out. */
export function transcriptOf(graph: GraphView, conversation: Omit<SimulatedConversation, 'state'>) {
  const named = (node: string, index: number | undefined) =>
    index === undefined ? undefined : graph.get(node)?.transitions[index];
  return {
    opening: conversation.opening,
    ended: conversation.endedBy !== undefined,
    ...(conversation.endedBy && { endedBy: conversation.endedBy }),
    turns: conversation.turns.map((turn) => ({
      node: turn.node,
      aimedAt: named(turn.node, turn.sampled),
      taken: named(turn.node, turn.taken),
      agreed: turn.agreed,
      user: turn.user,
      agent: turn.agent,
    })),
  };
}

/**
 * One progress line: `conversation 2/5: 4 user replies, ended by quit; classifier agreed 3 of 4`; a
 * conversation whose simulated user was told the end signal (`<end>`) says `ended by the simulated user`.
 */
export function progressLine(
  index: number,
  count: number,
  conversation: Omit<SimulatedConversation, 'state'>,
): string {
  const turns = conversation.turns.length;
  const checked = conversation.turns.filter((turn) => turn.agreed !== undefined);
  const agreed = checked.filter((turn) => turn.agreed).length;
  const end = {
    quit: 'ended by quit',
    user: 'ended by the simulated user',
    none: 'stopped at the turn limit',
  }[conversation.endedBy ?? 'none'];
  const agreement = checked.length ? `; classifier agreed ${agreed} of ${checked.length}` : '';
  return `conversation ${index}/${count}: ${turns} user ${turns === 1 ? 'reply' : 'replies'}, ${end}${agreement}`;
}

/** Columns padded to their widest cell; numbers right-aligned. */
function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) =>
    row
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}
