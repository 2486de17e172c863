/** Text shaping shared by the exporters: diagrams need short, wrapped excerpts of long node fields. */
import type { LabelLook, LabelPart } from './diagram.js';

/** How a diagram language writes a box's label. */
export interface LabelMarkup {
  /** The tags around each look, opening and closing. */
  looks: Record<LabelLook, readonly [string, string]>;
  /** Escapes one line of raw text. */
  escape: (text: string) => string;
  /** The line break. */
  br: string;
  /** The longest line, in characters. */
  width: number;
}

/** A box's label in a diagram language: each piece wrapped, escaped and tagged, pieces on lines of their own. */
export function labelText(parts: readonly LabelPart[], markup: LabelMarkup): string {
  return parts
    .map(({ look, text, lines }) => {
      const [open, close] = markup.looks[look];
      return `${open}${wrapText(text, markup.width, lines).map(markup.escape).join(markup.br)}${close}`;
    })
    .join(markup.br);
}

/** Whitespace (newlines included) collapsed to single spaces, trimmed. */
function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * Wraps `text` into lines of at most `width` characters, breaking at spaces (a word longer than a line
 * is cut), and keeps at most `maxLines`; when text is dropped the last line ends with `…`.
 */
export function wrapText(text: string, width: number, maxLines: number): string[] {
  const words = collapseWhitespace(text)
    .split(' ')
    .filter(Boolean)
    .flatMap((word) => chunk(word, width));
  const lines: string[] = [];
  let current = '';
  for (const word of words) {
    if (!current) current = word;
    else if (current.length + 1 + word.length <= width) current += ` ${word}`;
    else {
      lines.push(current);
      current = word;
    }
  }
  if (current) lines.push(current);
  if (lines.length <= maxLines) return lines;
  const kept = lines.slice(0, maxLines);
  const last = kept[maxLines - 1]!;
  kept[maxLines - 1] = `${last.length < width ? last : last.slice(0, width - 1)}…`;
  return kept;
}

function chunk(word: string, width: number): string[] {
  if (word.length <= width) return [word];
  const parts: string[] = [];
  for (let i = 0; i < word.length; i += width) parts.push(word.slice(i, i + width));
  return parts;
}
