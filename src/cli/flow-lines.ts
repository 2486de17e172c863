/**
 * A flow pass without the terminal view: one line per event that matters (steps, nodes settling,
 * retries, changes), for pipes and logs, and the pass's answers and summary at the end.
 */
import type { AgentEvent, EventBus } from '../events.js';
import type { PassReport } from '../flow/runner.js';
import { terminalSafe } from '../tui/terminal-safe.js';
import { plural } from './words.js';

/** The longest stretch of a reason or an answer shown on one progress line. */
const EXCERPT = 100;

/** Writes a line for each flow event on `bus`; returns a function that stops. */
export function printFlowLines(bus: EventBus, write: (line: string) => void): () => void {
  return bus.on((event) => {
    const line = (text: string) => write(`${terminalSafe(text)}\n`);
    switch (event.type) {
      case 'flow.started':
        line(
          `[flow] ${event.flow}: pass ${event.pass}${event.resumed ? ' (resumed)' : ''}, ${plural(event.nodes.length, 'node')}, up to ${event.concurrency} at once`,
        );
        break;
      case 'flow.step':
        line(`[step ${event.step}] ${event.nodes.join(', ')}`);
        break;
      case 'flow.node':
        if (event.status === 'running') break;
        line(nodeLine(event));
        break;
      case 'flow.changed':
        line(`  ~ ${event.by}: ${event.change}${event.applied ? '' : ` refused: ${event.reason ?? ''}`}`);
        break;
      case 'flow.database':
        line(`  db ${event.by} wrote ${event.keys.join(', ')}`);
        break;
      case 'flow.unset':
        line(`  ? ${event.node}: not in the database, read as None: ${event.references.join(', ')}`);
        break;
      case 'flow.trimmed':
        line(
          `  ✂ ${event.node}: prompt trimmed to the ${event.contextTokens}-token context, ${[
            event.dropped > 0 && `${plural(event.dropped, 'message')} dropped`,
            event.cut > 0 && `${plural(event.cut, 'message')} cut`,
          ]
            .filter(Boolean)
            .join(', ')} (${event.from} → ${event.to} tokens)`,
        );
        break;
    }
  });
}

function nodeLine(event: Extract<AgentEvent, { type: 'flow.node' }>): string {
  const facts = [event.tokens === undefined ? '' : plural(event.tokens, 'token'), event.model ?? ''];
  const tokens = facts.some(Boolean) ? ` (${facts.filter(Boolean).join(', ')})` : '';
  switch (event.status) {
    case 'done':
      return `  ✓ ${event.node}${tokens}${event.detail ? `: ${excerpt(event.detail)}` : ''}`;
    case 'retry':
      return `  ↻ ${event.node} attempt ${event.attempt ?? '?'}: ${excerpt(event.detail ?? '')}`;
    case 'failed':
      return `  ✗ ${event.node}: ${excerpt(event.detail ?? '')}`;
    case 'reused':
      return `  ↺ ${event.node} reused its last output (saved ${plural(event.tokens ?? 0, 'token')})`;
    case 'blocked':
      return `  ⊘ ${event.node}: ${event.detail ?? 'skipped'}`;
    default:
      return `  ${event.node}: ${event.status}`;
  }
}

/** The answers of the pass's final nodes, each under its name, for stdout. */
export function flowAnswers(report: PassReport): string {
  const shown = report.sinks.filter((name) => Object.hasOwn(report.outputs, name));
  return shown
    .map((name) => {
      const output = report.outputs[name];
      const text = typeof output === 'string' ? output : JSON.stringify(output, null, 2);
      return `${shown.length > 1 ? `## ${name}\n` : ''}${terminalSafe(text)}\n`;
    })
    .join('\n');
}

/** One line: how the pass ended. */
export function flowSummary(report: PassReport): string {
  const count = (status: string) => Object.values(report.results).filter((r) => r.status === status).length;
  const parts = [
    `${count('done')}/${report.order.length} answered`,
    count('failed') > 0 && `${count('failed')} failed`,
    count('blocked') > 0 && `${count('blocked')} skipped after a failure`,
    count('reused') > 0 && `${count('reused')} reused (saved ${plural(report.savedTokens, 'token')})`,
    plural(report.tokens, 'token'),
    `${(report.ms / 1000).toFixed(1)} s`,
  ].filter(Boolean);
  const state = report.interrupted ? 'stopped' : report.complete ? 'done' : 'incomplete';
  return `[flow] pass ${report.pass} ${state}: ${parts.join(', ')}`;
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT ? `${flat.slice(0, EXCERPT - 1)}…` : flat;
}
