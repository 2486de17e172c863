/** Plain-text helpers for fitting text into terminal columns before Ink sees it. */

/**
 * Word-wraps `text` to `width` columns, keeping its own line breaks and breaking words longer than a
 * line. Wrapping here, not in Ink, lets a component know how many lines it will take.
 */
export function wrapText(text: string, width: number): string[] {
  const w = Math.max(width, 1);
  const lines: string[] = [];
  for (const paragraph of text.split(/\r?\n/)) {
    let line = '';
    for (const word of paragraph.split(/(\s+)/)) {
      if (line.length + word.length <= w) {
        line += word;
        continue;
      }
      if (line.trim()) lines.push(line.trimEnd());
      line = /^\s+$/.test(word) ? '' : word;
      while (line.length > w) {
        lines.push(line.slice(0, w));
        line = line.slice(w);
      }
    }
    lines.push(line.trimEnd());
  }
  return lines;
}

/** The last `count` lines of `text` wrapped to `width`, and how many earlier lines were left out. */
export function tailLines(text: string, width: number, count: number): { lines: string[]; hidden: number } {
  const lines = wrapText(text.trimEnd(), width);
  const keep = Math.max(count, 0);
  if (lines.length <= keep) return { lines, hidden: 0 };
  return { lines: lines.slice(lines.length - keep), hidden: lines.length - keep };
}

/** One line: newlines shown as `⏎`, cut to `max` characters with an ellipsis. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s*\r?\n\s*/g, ' ⏎ ').trim();
  return flat.length > max ? `${flat.slice(0, Math.max(max - 1, 0))}…` : flat;
}
