/**
 * The text the guest evaluates (with an indirect `eval`, that is as global code) for a code node or an
 * expression. The user's code runs inside `try { … } catch`, so nothing it throws ever reaches
 * isolated-vm: isolated-vm reads a thrown object's `message` and `stack` after the time limit has
 * stopped applying, and a getter there could spin forever. The guest describes the error instead,
 * under the limit.
 *
 * Wrapping keeps what a code node means as a script: the completion value of the `try` block is the
 * completion value of its last statement (the capture that follows is a declaration, which has none);
 * `var` and bare assignments still land on the global object; a `'use strict'` directive is moved in
 * front of the `try`, where it still is one. Top-level `let`/`const`/`class` become block-scoped (and
 * strict code's `var` stays in the evaluated text), so the capture reads every identifier the code
 * mentions from inside the block, before it ends.
 */

/** The guest hooks the wrapped text calls: globals the guest defines read-only before the code runs. */
export const CAPTURE_HOOK = '__sandboxCapture';
export const FAIL_HOOK = '__sandboxFail';

/** The file name stack traces give the user's code; the guest reads line numbers from it. */
export const CODE_FILENAME = 'code.js';

/** Lines the wrapped text has before the user's first line. */
export const WRAPPED_LINE_OFFSET = 1;

/** Names the evaluated text in stack traces, as a script's file name would. */
const SOURCE_URL = `\n//# sourceURL=${CODE_FILENAME}`;

/** What to compile: `standalone` must parse on its own before `wrapped` may run (see `wrapCode`). */
export interface CompiledText {
  /** The code as the user wrote it (an expression in parentheses): compiled only to check its syntax. */
  standalone: string;
  /** The text that runs; the user's line 1 is its line 1 + WRAPPED_LINE_OFFSET. */
  wrapped: string;
  /** The scope variables the text can read by name (see `mentionedNames`). */
  mentions: Mentions;
}

/** The names a text mentions, or `'all'`: it may reach any variable (see `mentionedNames`). */
export type Mentions = ReadonlySet<string> | 'all';

/**
 * Text for a code node. The caller must compile `standalone` first: only code that parses on its own
 * is wrapped, which is what keeps a stray `}` in it from closing the `try` block early.
 */
export function wrapCode(code: string): CompiledText {
  const words = identifierWords(code);
  const names = variableNames(words);
  const thunks = names.map((name) => `()=>${name}`).join(',');
  // `const {} = …` binds no name (so it cannot clash with the user's) and, being a declaration,
  // leaves the block's completion value alone.
  const wrapped =
    `${isStrict(code) ? "'use strict';" : ''}try{\n${code}\n` +
    `;const {}=${CAPTURE_HOOK}(${JSON.stringify(names)},[${thunks}]);\n` +
    `}catch(thrown){${FAIL_HOOK}(thrown)}${SOURCE_URL}`;
  return { standalone: code, wrapped, mentions: mentionsOf(code, words) };
}

/** Text for one expression; its value is the completion value. */
export function wrapExpression(expression: string): CompiledText {
  return {
    standalone: `(${expression}\n)`,
    wrapped: `try{\n(${expression}\n)}catch(thrown){${FAIL_HOOK}(thrown)}${SOURCE_URL}`,
    mentions: mentionedNames(expression),
  };
}

/**
 * Text for a condition evaluated in a code node's call (guest.ts): an arrow function, compiled once and
 * called at every evaluation, which spares an `eval` each time. It evaluates the expression as global
 * code would: an arrow takes `this`, `arguments` and `new.target` from the global code around it, and
 * the caller passes no expression that names the global object or builds code from strings.
 */
export function wrapCondition(expression: string): string {
  return `(()=>{try{\nreturn (${expression}\n)}catch(thrown){${FAIL_HOOK}(thrown)}})${SOURCE_URL}`;
}

/** Words that cannot be read as a variable in a strict arrow function, plus our own hooks. */
const NOT_VARIABLES = new Set([
  ...['break', 'case', 'catch', 'class', 'const', 'continue', 'debugger', 'default', 'delete', 'do'],
  ...['else', 'enum', 'export', 'extends', 'false', 'finally', 'for', 'function', 'if', 'import', 'in'],
  ...['instanceof', 'new', 'null', 'return', 'super', 'switch', 'this', 'throw', 'true', 'try', 'typeof'],
  ...['var', 'void', 'while', 'with', 'yield', 'let', 'static', 'implements', 'interface', 'package'],
  ...['private', 'protected', 'public', 'await', 'arguments', 'eval', CAPTURE_HOOK, FAIL_HOOK],
]);

const IDENTIFIER = /[\p{ID_Start}$_][\p{ID_Continue}$\u200C\u200D]*/gu;
const IDENTIFIER_PART = /[\p{ID_Continue}$\u200C\u200D]/u;
const DIGIT = /[0-9]/;

/** `\u0061` or `\u{61}`, which may spell (part of) an identifier the word list would miss. */
const UNICODE_ESCAPE = /\\u/;

/** Words through which code reaches variables it does not name: the global object, and code made from strings. */
const REACHES_ANY_VARIABLE = ['globalThis', 'this', 'eval', 'Function'];

/**
 * The variables a text can read: those it names. Over-approximates on purpose (property names, words
 * in strings and comments, keywords). `'all'` for a text that may read a variable by a name it does
 * not spell out: through the global object (`globalThis[name]`), code made from strings, or an
 * identifier written with a Unicode escape.
 */
export function mentionedNames(text: string): Mentions {
  return mentionsOf(text, identifierWords(text));
}

/**
 * Every identifier in the code that could name a top-level variable. Over-approximates on purpose
 * (property names, words in strings and comments): a name with no binding is simply not found.
 */
export function capturableNames(code: string): string[] {
  return variableNames(identifierWords(code));
}

function mentionsOf(text: string, words: ReadonlySet<string>): Mentions {
  if (UNICODE_ESCAPE.test(text) || REACHES_ANY_VARIABLE.some((word) => words.has(word))) return 'all';
  return words;
}

/** The words of the text that could be identifiers, less those that can only be property names. */
function identifierWords(text: string): Set<string> {
  const words = new Set<string>();
  for (const match of text.matchAll(IDENTIFIER))
    if (!followsMemberDot(text, match.index)) words.add(match[0]);
  return words;
}

/**
 * Whether the word at `index` is a property name after a member access (`list.push`, `f().x`, `a?.b`):
 * a variable is never written there. Not after `...` (a spread names a variable), nor after a number
 * literal's dot (`5.` may end a statement, and the word start the next).
 */
function followsMemberDot(text: string, index: number): boolean {
  if (text[index - 1] !== '.') return false;
  const before = text[index - 2];
  if (before === ')' || before === ']' || before === '?') return true;
  if (before === undefined || !IDENTIFIER_PART.test(before)) return false;
  let start = index - 2;
  while (start > 0 && IDENTIFIER_PART.test(text[start - 1]!)) start--;
  return !DIGIT.test(text[start]!);
}

function variableNames(words: Iterable<string>): string[] {
  const names: string[] = [];
  for (const word of words) if (!NOT_VARIABLES.has(word)) names.push(word);
  return names;
}

/** Comments and white space that may come before a directive. */
const PROLOGUE_GAP = String.raw`(?:\s|//[^\n\r\u2028\u2029]*|/\*[\s\S]*?\*/)*`;
const USE_STRICT = new RegExp(
  String.raw`^${PROLOGUE_GAP}(['"])use strict\1[ \t]*(?:;|[\n\r\u2028\u2029]|//|/\*|$)`,
);

/** Whether the code opens with a `'use strict'` directive (the first one; `'use asm'; 'use strict'` is not seen). */
export function isStrict(code: string): boolean {
  return USE_STRICT.test(code);
}
