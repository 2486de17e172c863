/**
 * Untrusted text made harmless to a terminal. Model replies, code-node output, graph files and error
 * messages are untrusted, and a terminal obeys the control sequences in what it prints: an OSC 52 write
 * to the clipboard, a new window title, a cleared screen, a line overwritten by a carriage return. So
 * such text shows its control characters escaped (`\u001b`, as JSON and JavaScript write them, so JSON
 * output stays JSON) instead. The line-by-line output (src/cli) and the goal view both use it.
 */

/** C0 controls but Tab and line feed, a carriage return not ending a line, DEL, and the C1 controls. */
// eslint-disable-next-line no-control-regex -- control characters are what this finds
const CONTROL = /[\u0000-\u0008\u000B-\u000C\u000E-\u001F\u007F-\u009F]|\r(?!\n)/g;

/** `text` with every control character that could drive a terminal written out as `\u00HH`. */
export function terminalSafe(text: string): string {
  return text.replace(CONTROL, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
