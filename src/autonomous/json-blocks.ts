/**
 * Finding JSON objects in a model's free text (prose, code fences, quoted examples around them), and
 * parsing one with the few repairs that cannot change what the model meant.
 */

/** A balanced `{…}` in the text; `end` is exclusive. */
export interface JsonSpan {
  start: number;
  end: number;
  text: string;
}

/** What a scan of the text found. */
export interface JsonScan {
  /** The outermost complete objects, in order: the candidates for the answer. */
  blocks: JsonSpan[];
  /** Every complete object, nested ones included, in order of their start. */
  spans: JsonSpan[];
  /**
   * Where a JSON object begins and never closes: the answer was cut off (usually by the token limit).
   * Absent when every object that starts like one closes.
   */
  cutOff?: number;
}

/**
 * Scans `text` for balanced braces. Strings are tracked only inside braces, so a quote in the prose
 * around the JSON cannot hide it, while a brace inside a JSON string never counts.
 */
export function findJsonObjects(text: string): JsonScan {
  const open: number[] = [];
  const spans: JsonSpan[] = [];
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
    } else if (ch === '{') open.push(i);
    else if (ch === '}' && open.length > 0) {
      const start = open.pop()!;
      spans.push({ start, end: i + 1, text: text.slice(start, i + 1) });
    } else if (ch === '"' && open.length > 0) inString = true;
  }
  spans.sort((a, b) => a.start - b.start);
  const blocks: JsonSpan[] = [];
  for (const span of spans) if (span.start >= (blocks.at(-1)?.end ?? 0)) blocks.push(span);
  // A stray "{" in prose is not a cut-off answer; an unclosed one that starts like an object is, and
  // the outermost one is where the answer began.
  const cutOff = open.find((at) => startsObject(text, at));
  return cutOff === undefined ? { blocks, spans } : { blocks, spans, cutOff };
}

function startsObject(text: string, at: number): boolean {
  const start = /\{\s*"/y;
  start.lastIndex = at;
  return start.test(text);
}

/** The result of parsing one block. */
export type ParsedJson = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * `JSON.parse`, and when that fails, once more after two repairs that keep the meaning: trailing
 * commas dropped, and raw control characters inside strings escaped (models often write a file's
 * newlines literally). The error reported is the one of the text as written.
 */
export function parseJsonLenient(text: string): ParsedJson {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    try {
      return { ok: true, value: JSON.parse(repairJson(text)) };
    } catch {
      return { ok: false, error: (error as Error).message };
    }
  }
}

const ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function repairJson(text: string): string {
  let out = '';
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
      else if (ch < ' ') {
        out += ESCAPES[ch] ?? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
        continue;
      }
    } else if (ch === '"') inString = true;
    else if (ch === ',' && closesNext(text, i + 1)) continue;
    out += ch;
  }
  return out;
}

/** Whether only whitespace stands between `from` and a closing bracket. */
function closesNext(text: string, from: number): boolean {
  const closing = /\s*[}\]]/y;
  closing.lastIndex = from;
  return closing.test(text);
}
