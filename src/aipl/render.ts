/**
 * The renderer: a pure function of the template, the scope and which blocks are shown. It asks nothing;
 * the phase (phase.ts) has decided every block before it runs. Updates render as nothing.
 */
import type { BlockPart, Part, SpecialName } from './ast.js';
import { refText, type Scope } from './evaluate.js';

/** Renders `parts`; values read from the state are inserted as they are, never read as template. */
export function renderParts(parts: readonly Part[], scope: Scope, shown: ReadonlySet<BlockPart>): string {
  let out = '';
  for (const part of parts) {
    if (part.kind === 'text') out += part.text;
    else if (part.kind === 'ref') out += refText(part, scope);
    else if (part.kind === 'block' && shown.has(part)) out += renderParts(part.body, scope, shown);
  }
  return out;
}

/** Text that AIPL reads back as itself: how the engine embeds `$var`s into a template. */
export function escapeAipl(text: string): string {
  return text.replace(/[\\(){}]/g, '\\$&');
}

/** `{date}` and `{time}` for `now`, in the time zone of the machine (or `timeZone`). */
export function clockSpecials(
  now: Date,
  timeZone?: string,
): Pick<Record<SpecialName, string>, 'date' | 'time'> {
  const zone = timeZone === undefined ? {} : { timeZone };
  return {
    date: now.toLocaleDateString('en-US', {
      ...zone,
      weekday: 'long',
      year: 'numeric',
      month: 'long',
      day: 'numeric',
    }),
    time: now.toLocaleTimeString('en-GB', { ...zone, hour: '2-digit', minute: '2-digit' }),
  };
}
