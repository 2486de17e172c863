/**
 * Parses AIPL templates (seed 002) into the typed tree of ast.ts. A template either parses whole or not at
 * all: a syntax error is an AiplSyntaxError naming the line and column, and nothing is rendered half.
 *
 * Lines that only hold AIPL (a comment, an update, a block's opening condition or its closing `)`) leave
 * nothing behind when rendered, not even their line break, as Mustache treats its standalone tags; so a
 * template can be laid out one construct a line without filling the prompt with blank lines.
 */
import { UserError } from '../errors.js';
import type { Part, Position, Template, TextPart } from './ast.js';
import { aiplParser } from './grammar.js';

/** A part as the grammar builds it: comments are still there, to know which lines held only AIPL. */
type RawPart = Part | { kind: 'comment' };

/** A template that does not parse: where, and what was expected there. */
export class AiplSyntaxError extends UserError {
  constructor(
    /** What the template is, e.g. `sales.aipl` or `node "greet" instruction`. */
    readonly origin: string,
    readonly at: Position,
    /** The problem, without its place. */
    readonly problem: string,
    /** The template's line with a caret under the column. */
    readonly excerpt: string,
  ) {
    super(`${origin}:${at.line}:${at.column}: ${problem}`, 2, excerpt);
  }
}

/** What a Peggy syntax error carries that we read. */
interface PeggyError {
  message: string;
  location: { start: { line: number; column: number } };
  expected: { type: string; description?: string; text?: string }[] | null;
  found: string | null;
}

function isPeggyError(error: unknown): error is PeggyError {
  return error instanceof Error && 'location' in error && 'expected' in error;
}

/**
 * How deep parentheses and braces may nest. The parser descends once per level, so a template from
 * elsewhere nesting thousands deep would exhaust the stack; no prompt needs a tenth of this.
 */
export const MAX_NESTING = 64;

/** Parses `source`; `origin` names it in error messages. */
export function parseTemplate(source: string, origin = 'template'): Template {
  const tooDeep = nestingBeyond(source, MAX_NESTING);
  if (tooDeep !== undefined)
    throw new AiplSyntaxError(
      origin,
      tooDeep,
      `parentheses nest more than ${MAX_NESTING} deep here`,
      excerpt(source, tooDeep),
    );
  let raw: RawPart[];
  try {
    raw = aiplParser().parse(source) as RawPart[];
  } catch (error) {
    if (!isPeggyError(error)) throw error;
    const at = { line: error.location.start.line, column: error.location.start.column };
    throw new AiplSyntaxError(origin, at, problemOf(error), excerpt(source, at));
  }
  return { parts: settle(raw), source };
}

/** What the grammar expects where an expression starts (grammar.ts `Primary`). */
const EXPRESSION_STARTS = new Set([
  '"("',
  '"!"',
  'a quoted string',
  'a function name',
  '"{"',
  '"{{"',
  'a value',
]);

/** What text may go on with: never what is missing. */
const TEXT_STARTS = new Set(['\\', '{', '{{']);

/** A Peggy error in words: ours as written, or "expected …, found …" without the whitespace noise. */
function problemOf(error: PeggyError): string {
  if (error.expected === null) return error.message;
  const wanted = [
    ...new Set(
      error.expected
        .filter((e) => e.type !== 'class' && e.description !== 'whitespace' && !TEXT_STARTS.has(e.text ?? ''))
        .map((e) => e.description ?? (e.text === undefined ? e.type : JSON.stringify(e.text))),
    ),
  ];
  // Where an expression may start, every way to start one is expected: say so in one word.
  if (wanted.includes('a value'))
    wanted.splice(0, wanted.length, 'an expression', ...wanted.filter((w) => !EXPRESSION_STARTS.has(w)));
  const found = error.found === null ? 'the end of the template' : JSON.stringify(error.found);
  const expected =
    wanted.length <= 1
      ? (wanted[0] ?? 'something else')
      : `${wanted.slice(0, -1).join(', ')} or ${wanted.at(-1)}`;
  return `expected ${expected}, found ${found}`;
}

/** Where unescaped `(` first nest deeper than `limit`, or undefined. */
function nestingBeyond(source: string, limit: number): Position | undefined {
  let depth = 0;
  let line = 1;
  let column = 0;
  for (let i = 0; i < source.length; i++) {
    const char = source[i];
    column += 1;
    if (char === '\n') {
      line += 1;
      column = 0;
    } else if (char === '\\') {
      i += 1;
      column += 1;
    } else if (char === '(' && ++depth > limit) return { line, column };
    else if (char === ')') depth = Math.max(0, depth - 1);
  }
  return undefined;
}

/** Characters of a long line shown before the column in an excerpt, and in all. */
const EXCERPT_BEFORE = 40;
const EXCERPT_CHARS = 120;

/** The line at `at` with a caret under its column; a long line is cut to the part around the column. */
function excerpt(source: string, at: Position): string {
  const line = source.split(/\r?\n/)[at.line - 1] ?? '';
  const start = line.length <= EXCERPT_CHARS ? 0 : Math.max(0, at.column - 1 - EXCERPT_BEFORE);
  const before = start > 0 ? '…' : '';
  const after = start + EXCERPT_CHARS < line.length ? '…' : '';
  const shown = `${before}${line.slice(start, start + EXCERPT_CHARS)}${after}`;
  const caret = ' '.repeat(at.column - 1 - start + before.length);
  return `${at.line} | ${shown}\n${' '.repeat(String(at.line).length)} | ${caret}^`;
}

/** Merges adjacent texts, removes the lines that only held AIPL, drops comments; blocks recursively. */
function settle(raw: RawPart[]): Part[] {
  const parts = mergeTexts(raw);
  const texts = parts.map((part) => (part.kind === 'text' ? part.text : undefined));
  parts.forEach((part, i) => {
    if (part.kind === 'text' || part.kind === 'ref') return;
    const before = i === 0 ? '' : texts[i - 1];
    const after = i === parts.length - 1 ? '' : texts[i + 1];
    const startsLine =
      before !== undefined && (i === 1 || i === 0 ? /(^|\n)[ \t]*$/ : /\n[ \t]*$/).test(before);
    const endsLine = after !== undefined && /^[ \t]*(\r?\n|$)/.test(after);
    if (part.kind === 'block') {
      // The opening line's break is the grammar's; its indentation goes with it.
      if (startsLine) trimEnd(parts, i - 1);
      const body = mergeTexts(part.body);
      const last = body.at(-1);
      if (endsLine && last?.kind === 'text' && /(^|\n)[ \t]*$/.test(last.text)) {
        last.text = last.text.replace(/[ \t]*$/, '');
        trimStartLine(parts, i + 1);
      }
      part.body = settle(body);
    } else if (startsLine && endsLine) {
      trimEnd(parts, i - 1);
      trimStartLine(parts, i + 1);
    }
  });
  return parts.filter(
    (part): part is Part => part.kind !== 'comment' && !(part.kind === 'text' && part.text === ''),
  );
}

function mergeTexts(raw: RawPart[]): RawPart[] {
  const merged: RawPart[] = [];
  for (const part of raw) {
    const last = merged.at(-1);
    if (part.kind === 'text' && last?.kind === 'text') last.text += part.text;
    else merged.push(part.kind === 'text' ? { ...part } : part);
  }
  return merged;
}

function textAt(parts: RawPart[], i: number): TextPart | undefined {
  const part = parts[i];
  return part?.kind === 'text' ? part : undefined;
}

/** Removes the indentation that ends the text at `i`. */
function trimEnd(parts: RawPart[], i: number): void {
  const text = textAt(parts, i);
  if (text) text.text = text.text.replace(/[ \t]*$/, '');
}

/** Removes the blanks and the line break that start the text at `i`. */
function trimStartLine(parts: RawPart[], i: number): void {
  const text = textAt(parts, i);
  if (text) text.text = text.text.replace(/^[ \t]*\r?\n?/, '');
}
