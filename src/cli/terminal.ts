/**
 * Output to a terminal. Whatever goes to a terminal shows its control characters escaped
 * (../tui/terminal-safe.ts says why); output to a file or a pipe stays byte for byte what was written.
 * (The full-screen view is safe already: Ink drops such sequences.)
 */
import { relative } from 'node:path';
import { terminalSafe } from '../tui/terminal-safe.js';

/** Writes `text` to stdout, escaped when stdout is a terminal. */
export function writeOut(text: string): boolean {
  return process.stdout.write(process.stdout.isTTY ? terminalSafe(text) : text);
}

/** Writes `text` to stderr, escaped when stderr is a terminal. */
export function writeErr(text: string): boolean {
  return process.stderr.write(process.stderr.isTTY ? terminalSafe(text) : text);
}

/** A path as the user would type it: relative to where they are, when it is below. */
export function shownPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') ? rel : path;
}
