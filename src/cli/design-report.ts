/**
 * What `meta-agent design` prints: a line per stage as it ends (when no terminal UI is shown), and the
 * summary of a finished design. Pure text functions, so tests can read them without running a design.
 */
import type { DesignFigures, DesignSuccess } from '../../meta/design.js';
import type { AgentEvent, EventBus } from '../events.js';
import { plural } from './words.js';

type StageEvent = Extract<AgentEvent, { type: 'design.stage' }>;

/**
 * Writes one line when a stage ends (done or failed) and one per retry, with the stage's time: the form
 * of progress that reads well in a log or a pipe. Returns the unsubscribe function.
 */
export function printStageLines(bus: EventBus, write: (line: string) => void, now = () => performance.now()) {
  const startedAt = new Map<string, number>();
  return bus.on((event) => {
    if (event.type !== 'design.stage') return;
    const line = stageLine(event, startedAt, now());
    if (line) write(`${line}\n`);
  });
}

function stageLine(event: StageEvent, startedAt: Map<string, number>, now: number): string | undefined {
  const { stage, status, detail } = event;
  if (status === 'start') {
    startedAt.set(stage, now);
    return undefined;
  }
  if (status === 'progress') return undefined;
  const seconds = `${((now - (startedAt.get(stage) ?? now)) / 1000).toFixed(1)} s`;
  if (status === 'retry') return `  ↻ ${stage}: trying again: ${detail ?? 'no reason given'}`;
  if (status === 'fail') return `✗ ${stage} failed after ${seconds}: ${detail ?? 'no reason given'}`;
  return `✓ ${stage} ${seconds}${detail ? ` (${detail})` : ''}`;
}

/** The summary of a finished design, ending with the command to chat with the new agent. */
export function designSummary(design: DesignSuccess, model: string): string {
  const { graph, saved, figures, check } = design;
  const edges = graph.nodes.reduce((sum, n) => sum + n.transitions.length, 0);
  const rows: [string, string][] = [
    ['graph', `${graph.nodes.length} nodes, ${edges} edges`],
    ['files', `${saved.graph} (and .dot, .svg, .html beside it)`],
    ['model', `${model}${figures.scripted ? ' [scripted]' : ''}`],
    ...callRows(figures),
  ];
  if (check)
    rows.push([
      'check',
      `${check.conversations} conversations: ${check.edgesCovered}/${check.edges} edges covered, ` +
        `classifier agreed ${check.agreed}/${check.decisions}` +
        (check.repaired.length ? `; repaired ${check.repaired.join(', ')}` : '') +
        (check.unrepaired.length ? `; not repaired: ${check.unrepaired.join('; ')}` : ''),
    ]);
  const width = Math.max(...rows.map(([label]) => label.length));
  const scripted = figures.scripted ? ' [scripted: the answers came from a rules file, not a model]' : '';
  return [
    `designed ${graph.name}${scripted}`,
    ...rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`),
    '',
    'chat with it:',
    `  meta-agent chat ${quoteArg(saved.graph)}`,
  ].join('\n');
}

/** Calls, round trips, tokens, cost and time. */
function callRows(figures: DesignFigures): [string, string][] {
  const count = new Intl.NumberFormat('en-US');
  const { usage } = figures;
  return [
    [
      'calls',
      `${plural(figures.calls, 'model call')} in ${plural(figures.roundTrips, 'sequential round trip')}`,
    ],
    ['tokens', `${count.format(usage.promptTokens)} in, ${count.format(usage.completionTokens)} out`],
    ['cost', usage.local ? 'none (local or scripted model)' : `$${usage.costUsd.toFixed(4)} (estimated)`],
    ['time', `${figures.seconds.toFixed(1)} s`],
  ];
}

/** Quotes a path for a shell when it needs it. */
function quoteArg(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
