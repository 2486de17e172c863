/**
 * How many lines each region of a layout gets. The live region (everything Ink redraws) is kept at
 * least one line shorter than the terminal: once it reaches the terminal's height Ink has to clear
 * the screen on every frame, which flickers and wipes scrollback.
 */
import { useWindowSize } from 'ink';

/** Terminal size in character cells. */
export interface TerminalSize {
  rows: number;
  columns: number;
}

/** The terminal's size, following resizes; `override` fixes it (tests, embedding in a larger UI). */
export function useTerminalSize(override?: TerminalSize): TerminalSize {
  const size = useWindowSize();
  return override ?? size;
}

/** Lines of the chat layout: panels, the live turn, then the status bar and the reply line (one each). */
export interface ChatHeights {
  panels: number;
  live: number;
  /** Rows above the live region, where the transcript's last lines stay in view. */
  above: number;
}

/** The smallest panel height that still shows a line between two scroll markers, plus a title. */
const MIN_PANELS = 4;

/**
 * Splits the rows of a terminal between the chat layout's regions. A quarter of the rows stays above
 * them, where the transcript's last lines remain in view: finished messages are printed above the live
 * region, so a live region as tall as the terminal would scroll each reply out of sight at once.
 */
export function chatHeights(rows: number): ChatHeights {
  const budget = Math.max(rows - 1 - Math.floor(rows / 4), 0) - 2;
  const live = Math.min(Math.max(Math.floor(budget / 6), 2), 5);
  const panels = Math.max(budget - live, MIN_PANELS);
  // Ink ends the live region with a newline, so the cursor takes a row below it.
  return { panels, live, above: Math.max(rows - (panels + live + 2) - 1, 0) };
}

/** Lines of the design layout above its status bar; it leaves no room above it. */
export function designHeight(rows: number): number {
  return Math.max(rows - 1 - 1, MIN_PANELS);
}

/** Columns of the left panel when two panels share a row; the right one gets the rest less a gap. */
export function splitColumns(columns: number): { left: number; right: number } {
  const left = Math.max(Math.floor(columns * 0.55), 20);
  return { left, right: Math.max(columns - left - 1, 10) };
}
