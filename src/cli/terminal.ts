/**
 * Output to a terminal. Model replies, code-node output, graph files and error messages are untrusted
 * text, and a terminal obeys the control sequences in what it prints: an OSC 52 write to the clipboard,
 * a new window title, a cleared screen, a line overwritten by a carriage return. So whatever goes to a
 * terminal shows its control characters escaped (`\u001b`, as JSON and JavaScript write them, so
 * JSON output stays JSON) instead; output to a file or a pipe stays
 * byte for byte what was written. (The full-screen view is safe already: Ink drops such sequences.)
 */
import { relative } from 'node:path';

/** C0 controls but Tab and line feed, a carriage return not ending a line, DEL, and the C1 controls. */
// eslint-disable-next-line no-control-regex -- control characters are what this finds
const CONTROL = /[\u0000-\u0008\u000B-\u000C\u000E-\u001F\u007F-\u009F]|\r(?!\n)/g;

/** `text` with every control character that could drive a terminal written out as `\u00HH`. */
export function terminalSafe(text: string): string {
  return text.replace(CONTROL, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

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
