/**
 * Which part of a long list fits in a fixed number of lines. Every hidden line is counted in a
 * "↑ N more" / "↓ N more" marker, and the markers take lines of their own, so nothing is cut off
 * silently and the list never grows past its height.
 */

/** Lines `start..end` are shown; `above` and `below` lines are hidden and need a marker each. */
export interface ScrollWindow {
  start: number;
  end: number;
  above: number;
  below: number;
}

/** The smallest height that can show one line between two markers. */
export const MIN_SCROLL_HEIGHT = 3;

/**
 * A window of at most `height` lines (markers included) over `total` lines that keeps line `focus` in
 * view: from the top while the focus is near it, centred on the focus further down.
 */
export function scrollWindow(total: number, focus: number, height: number): ScrollWindow {
  if (total <= height) return { start: 0, end: total, above: 0, below: 0 };
  const h = Math.max(height, MIN_SCROLL_HEIGHT);
  const at = Math.min(Math.max(focus, 0), total - 1);
  if (at < h - 1) return { start: 0, end: h - 1, above: 0, below: total - (h - 1) };
  if (at >= total - (h - 1)) return { start: total - (h - 1), end: total, above: total - (h - 1), below: 0 };
  const content = h - 2;
  const start = Math.min(Math.max(at - Math.floor(content / 2), 1), total - content - 1);
  return { start, end: start + content, above: start, below: total - start - content };
}

/** A window of at most `height` lines over `total` lines whose first shown line is near `offset`. */
export function offsetWindow(total: number, offset: number, height: number): ScrollWindow {
  if (total <= height) return { start: 0, end: total, above: 0, below: 0 };
  const h = Math.max(height, MIN_SCROLL_HEIGHT);
  if (offset <= 0) return { start: 0, end: h - 1, above: 0, below: total - (h - 1) };
  if (offset >= total - (h - 1))
    return { start: total - (h - 1), end: total, above: total - (h - 1), below: 0 };
  const start = Math.min(offset, total - (h - 2) - 1);
  return { start, end: start + h - 2, above: start, below: total - start - (h - 2) };
}
