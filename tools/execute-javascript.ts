/**
 * `execute_javascript`: the model's JavaScript run in the sandbox (the run's CodeRunner), answered with
 * what it printed and the value it ended with.
 */
import { z } from 'zod';
import { defineCommand } from './command.js';

/** The most characters the output gives the model; longer output is cut, with a note saying so. */
export const MAX_JAVASCRIPT_OUTPUT_CHARS = 10_000;

export const executeJavascript = defineCommand({
  name: 'execute_javascript',
  title: 'Execute JavaScript',
  description:
    'Runs JavaScript in an isolated sandbox with no files, network, environment or modules ' +
    '(no require, import, process or fetch), synchronously and under a time and memory limit. ' +
    'Returns what console.log printed and the value of the last statement; each call starts afresh.',
  args: z.object({ code: z.string().describe('full_code_string') }),
  effect: 'compute',
  needs: ['code'],
  async run({ code }, { code: runner }) {
    const { value, logs } = await runner.evaluate(code);
    return javascriptOutput(logs, value);
  },
});

/** Room a cut keeps for its note. */
const NOTE_CHARS = 64;

/**
 * The console output, then `Result: …`, within MAX_JAVASCRIPT_OUTPUT_CHARS. The result keeps at least
 * half of the room whatever was printed: it is what the model asked for.
 */
function javascriptOutput(logs: readonly string[], value: unknown): string {
  const printed = logs.join('\n');
  const result = `Result: ${shown(value)}`;
  const room = MAX_JAVASCRIPT_OUTPUT_CHARS - (printed === '' ? 0 : 1);
  const resultRoom = Math.max(room / 2, room - printed.length);
  const printedRoom = room - Math.min(result.length, resultRoom);
  const head = printed === '' ? '' : `${cut(printed, printedRoom, 'console output')}\n`;
  return `${head}${cut(result, resultRoom, 'the result')}`;
}

/** A string as itself; other data as JSON; what JSON cannot say (undefined, NaN, a BigInt) as String gives it. */
function shown(value: unknown): string {
  if (typeof value === 'object' && value !== null) {
    try {
      return JSON.stringify(value);
    } catch {
      // The sandbox hands back plain data only; another runner may not (a cycle, a BigInt).
      return String(value);
    }
  }
  return String(value);
}

/** `text` within `room` characters: its end, when cut, replaced by a note saying how much is missing. */
function cut(text: string, room: number, what: string): string {
  if (text.length <= room) return text;
  const kept = Math.max(0, room - NOTE_CHARS);
  return `${text.slice(0, kept)}\n[… ${text.length - kept} more characters of ${what} cut]`;
}
