/**
 * Model and tool text made fit for the goal view. Everything a goal run shows came from a model or a
 * command (thoughts, arguments, results, file names): untrusted text that may hold terminal control
 * sequences or be megabytes long. It passes through {@link untrusted} once, when it enters the view
 * state, and is shortened again where it is drawn.
 */
import { stripVTControlCharacters } from 'node:util';
import { terminalSafe } from '../terminal-safe.js';

/** Most characters of one piece of model or tool text the view keeps. */
export const MAX_SHOWN_CHARS = 8000;

/**
 * `text` without escape sequences (colours, OSC titles, cursor moves); any other control character
 * written out as `\u00HH`; tabs as two spaces and line endings as `\n`; cut to `max` characters.
 */
export function untrusted(text: string, max = MAX_SHOWN_CHARS): string {
  const plain = terminalSafe(stripVTControlCharacters(text.replace(/\r\n/g, '\n').replace(/\t/g, '  ')));
  return plain.length > max ? `${plain.slice(0, max)}… (${plain.length - max} more characters)` : plain;
}

/** A command argument, ready to show: its name and its value as text. */
export interface ShownArg {
  name: string;
  value: string;
}

/** Arguments as name and text: strings as they are, anything else as JSON. */
export function shownArgs(args: Record<string, unknown>): ShownArg[] {
  return Object.entries(args).map(([name, value]) => ({
    name: untrusted(name, 80),
    value: untrusted(typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value))),
  }));
}

/** One line: line breaks as `⏎`, cut to `max` characters with the count of the rest. */
export function shortValue(text: string, max: number): string {
  const flat = text.replace(/\s*\n\s*/g, ' ⏎ ').trim();
  if (flat.length <= max) return flat;
  return `${flat.slice(0, Math.max(max - 1, 0))}… (${flat.length} chars)`;
}

/** `write_to_file file=notes.txt text="hello ⏎ world"`: values with spaces are quoted, each shortened. */
export function commandLine(name: string, args: readonly ShownArg[], maxValue = 60): string {
  const parts = args.map(({ name: key, value }) => {
    const short = shortValue(value, maxValue);
    return `${key}=${/^[^\s"]+$/.test(short) ? short : `"${short}"`}`;
  });
  return [name, ...parts].join(' ');
}

/** The first `count` lines of `text`, and how many lines follow them. */
export function foldLines(text: string, count: number): { lines: string[]; more: number } {
  const lines = text.replace(/\n+$/, '').split('\n');
  if (lines.length <= count) return { lines, more: 0 };
  return { lines: lines.slice(0, count), more: lines.length - count };
}
