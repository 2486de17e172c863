/**
 * What the inspector shows of a conversation's AIPL state (src/aipl/state.ts): the latest value of each
 * name and the figures of the last model-update phase. Folded from `aipl.phase` events as they come, or
 * read from a saved state's log on resume; the full log stays in the state file (`meta-agent history`).
 */
import type { AiplState } from '../aipl/state.js';
import type { AgentEvent } from '../events.js';
import type { FieldLine } from './node-fields.js';
import { oneLine, wrapText } from './text.js';

type AiplPhaseEvent = Extract<AgentEvent, { type: 'aipl.phase' }>;

/** A name's latest value and the turn it was stored in. */
export interface AiplValue {
  value: string;
  turn: number;
}

/** The AIPL state as the view keeps it. */
export interface AiplView {
  /** Latest values by name, in the order the names were first stored. */
  values: ReadonlyMap<string, AiplValue>;
  /** The last phase of this session; a resumed conversation has none until its first render. */
  lastPhase?: Omit<AiplPhaseEvent, 'type' | 'stored'>;
}

/** A conversation on an AIPL graph before anything is stored. */
export function emptyAiplView(): AiplView {
  return { values: new Map() };
}

/** The latest values of a saved state's log: the last entry of a name wins. */
export function aiplViewOf(state: AiplState): AiplView {
  const values = new Map<string, AiplValue>();
  for (const { name, value, turn } of state.log) values.set(name, { value, turn });
  return { values };
}

/** Folds a phase in: what it stored replaces earlier values of the same names. */
export function foldAiplPhase(view: AiplView | undefined, event: AiplPhaseEvent): AiplView {
  const { type: _, stored, ...figures } = event;
  const values = new Map(view?.values);
  for (const { name, value } of stored) values.set(name, { value, turn: event.turn });
  return { values, lastPhase: figures };
}

/**
 * The inspector's "AIPL state" field: the last phase's figures, then `ns.key = "value"  (turn N)` per
 * name, each value cut to one line of `width` as the transcript cuts variables.
 */
export function aiplLines(view: AiplView, width: number): FieldLine[] {
  const lines: FieldLine[] = [{ label: 'AIPL state', text: '' }];
  if (view.lastPhase)
    for (const text of wrapText(phaseSummary(view.lastPhase), width - 2)) lines.push({ text });
  if (view.values.size === 0) lines.push({ text: 'no values stored yet', empty: true });
  for (const [name, { value, turn }] of view.values) {
    const suffix = `  (turn ${turn})`;
    lines.push({
      text: `${oneLine(`${name} = ${JSON.stringify(value)}`, width - 2 - suffix.length)}${suffix}`,
    });
  }
  return lines;
}

/** `turn 3, prompt: 4 model calls, 1 cached, 820 ms`. */
function phaseSummary(phase: NonNullable<AiplView['lastPhase']>): string {
  const calls = `${phase.calls} model call${phase.calls === 1 ? '' : 's'}`;
  return `turn ${phase.turn}, ${phase.label}: ${calls}, ${phase.cached} cached, ${phase.ms} ms`;
}
