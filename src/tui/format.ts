/** Short renderings of numbers and decisions shared by the status bar, transcript and history. */
import type { Decision, TurnEdits } from './run-state.js';
import { oneLine } from './text.js';

/** `1234567` -> `1.2M`, `12345` -> `12.3k`, small numbers as they are. */
export function formatCount(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1)}M`;
  if (n >= 10_000) return `${(n / 1_000).toFixed(1)}k`;
  return n.toLocaleString('en-US');
}

/** Dollars with enough places to show a cheap call: `$0.0012`, `$1.24`. */
export function formatCost(dollars: number): string {
  return dollars >= 1 ? `$${dollars.toFixed(2)}` : `$${dollars.toFixed(4)}`;
}

/** `65_000` -> `1m 05s`; `3_700_000` -> `1h 01m`. */
export function formatElapsed(ms: number): string {
  const seconds = Math.max(Math.floor(ms / 1000), 0);
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return `${h}h ${String(m).padStart(2, '0')}m`;
  if (m > 0) return `${m}m ${String(s).padStart(2, '0')}s`;
  return `${s}s`;
}

/** `B` with choices [yes, no] -> `B) no`; an answer that is not a letter is shown as given. */
function choiceText(answer: string, choices: readonly string[] = []): string {
  const letter = answer.trim().toUpperCase();
  const index = /^[A-Z]$/.test(letter) ? letter.charCodeAt(0) - 65 : -1;
  const choice = choices[index];
  return choice !== undefined ? `${letter}) ${choice}` : answer;
}

/** One line describing a decision, at most `width` characters. */
export function decisionText(decision: Decision, width: number): string {
  switch (decision.kind) {
    case 'transition': {
      if (decision.via === 'start') return oneLine(`start at ${decision.to}`, width);
      const parts: string[] = [];
      if (decision.via !== 'single') parts.push(decision.via);
      if (decision.answer !== undefined) parts.push(`chose ${choiceText(decision.answer, decision.choices)}`);
      if (decision.question) parts.push(`Q: ${decision.question}`);
      const detail = parts.length > 0 ? `  (${parts.join(' · ')})` : '';
      return oneLine(`${decision.from} → ${decision.to}${detail}`, width);
    }
    case 'thought':
      return oneLine(`thought at ${decision.node}: ${decision.text}`, width);
    case 'variable':
      return oneLine(`${decision.name} = ${decision.value}  (at ${decision.node})`, width);
    case 'log':
      return oneLine(`${decision.node} printed: ${decision.text}`, width);
  }
}

/** `v4` for one version, `v3–v5` for a turn's several. */
export function versionRange(edit: Pick<TurnEdits, 'from' | 'version'>): string {
  return edit.from === edit.version ? `v${edit.version}` : `v${edit.from}–v${edit.version}`;
}

/** `v4 by self: +ask_age ~greet -old`, with the graph panel's markers, for its title. */
export function editSummary(edit: TurnEdits): string {
  const nodes = [
    ...edit.added.map((n) => `+${n}`),
    ...edit.changed.map((n) => `~${n}`),
    ...edit.removed.map((n) => `-${n}`),
  ];
  return `${versionRange(edit)} by ${edit.by.join(', ')}: ${nodes.join(' ') || 'no net change'}`;
}
