/**
 * `$var` embedding (paper §2.4.1; AutoGRAMS' `set_variables`, autograms/autogram_utils.py): `$name` in an
 * instruction, a transition question, a transition choice or a transition string is replaced by the
 * variable's value as text. `\$` is a literal dollar sign; a `$` not followed by an identifier start (as
 * in `$5`) is left alone.
 *
 * Conditional text `?{ … }` appears, with its variables embedded, only when every variable in it is
 * defined (in scope and not null): `Greet the user.?{ Their name is $name.}` says the name once it is
 * known and nothing before. `\?{` and `\}` are a literal `?{` and `}`.
 */
import { UserError } from '../errors.js';
import { codeLanguage, type CodeLanguage } from '../graph/language.js';
import { pythonStr } from './python-str.js';

const REFERENCE = /\\\$|\$([A-Za-z_][A-Za-z0-9_]*)/g;
/** An unescaped `?{`, or the unescaped `}` that closes it. */
const OPEN = /(?<!\\)\?\{/g;
const CLOSE = /(?<!\\)\}/g;

/** A variable's value as prompt text: strings as they are, numbers and booleans as written, the rest as JSON. */
export function stringifyValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return 'undefined';
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return JSON.stringify(value) ?? String(value);
}

/** How a variable's value becomes text where `$var` embeds it. */
export type ValueText = (value: unknown) => string;

/**
 * How `$var` shows a value in a graph's text, or, given a node, in its code and call arguments: in the
 * language of either (src/graph/language.ts), as Python's str() in Python, as AutoGRAMS pastes
 * `str(value)` (`[1, 'x']`, `True`), else as stringifyValue (`[1,"x"]`, `true`).
 */
export function valueTextFor(
  config: { language?: CodeLanguage | undefined },
  node?: { language?: CodeLanguage | undefined },
): ValueText {
  return codeLanguage(config, node) === 'python' ? pythonStr : stringifyValue;
}

/** Where a text comes from, for the message when it names a variable that is not in scope. */
export interface TemplateSite {
  node: string;
  field: string;
}

/** Text with its variables embedded, and whether any conditional text `?{ … }` in it was shown. */
export interface Rendered {
  text: string;
  shownConditional: boolean;
}

/**
 * Embeds variables into `text`, conditional text included. An unknown variable outside conditional text
 * is the graph author's mistake: the error names the node and the field, and lists what is in scope.
 */
export function renderText(
  text: string,
  variables: Record<string, unknown>,
  where: TemplateSite,
  /** How a value becomes text: valueTextFor the graph (AIPL graphs escape it too). */
  valueText: ValueText = stringifyValue,
): Rendered {
  let out = '';
  let shownConditional = false;
  let at = 0;
  for (;;) {
    OPEN.lastIndex = at;
    const open = OPEN.exec(text);
    CLOSE.lastIndex = open ? open.index + 2 : 0;
    const close = open ? CLOSE.exec(text) : null;
    if (!open || !close) break;
    out += embed(text.slice(at, open.index), variables, where, valueText);
    const inner = text.slice(open.index + 2, close.index);
    if (referencedNames(inner).every((name) => isDefined(variables, name))) {
      out += embed(inner, variables, where, valueText);
      shownConditional = true;
    }
    at = close.index + 1;
  }
  out += embed(text.slice(at), variables, where, valueText);
  return { text: out, shownConditional };
}

/** `renderText` when only the text matters. */
export function renderTemplate(
  text: string,
  variables: Record<string, unknown>,
  where: TemplateSite,
  valueText: ValueText = stringifyValue,
): string {
  return renderText(text, variables, where, valueText).text;
}

/**
 * Embeds variables into a code node's code, as AutoGRAMS pastes them into a `python_function`'s
 * Python: `s2 = '$s1' + 'x'` becomes `s2 = 'hello' + 'x'`. Only names in scope are replaced, because `$`
 * also starts ordinary JavaScript identifiers; `\$` is left as written (in a string it already means `$`).
 */
export function embedInCode(
  code: string,
  variables: Record<string, unknown>,
  valueText: ValueText = stringifyValue,
): string {
  if (!code.includes('$')) return code;
  return code.replace(REFERENCE, (match, name: string | undefined) =>
    name !== undefined && Object.hasOwn(variables, name) ? valueText(variables[name]) : match,
  );
}

/** True when `text` names a variable with `$name`. */
export function mentionsVariable(text: string): boolean {
  return referencedNames(text).length > 0;
}

function embed(
  text: string,
  variables: Record<string, unknown>,
  where: TemplateSite,
  valueText: ValueText,
): string {
  // The escapes of conditional text are the template's own: a value is embedded as it is.
  return text.replace(/\\(\?\{|\})/g, '$1').replace(REFERENCE, (_match, name: string | undefined) => {
    if (name === undefined) return '$';
    if (!Object.hasOwn(variables, name)) {
      const known = Object.keys(variables).filter((k) => !k.startsWith('_'));
      throw new UserError(
        `node "${where.node}": ${where.field} uses $${name}, but no variable "${name}" is in scope`,
        1,
        known.length ? `variables in scope: ${known.join(', ')}` : 'no variables are in scope here',
      );
    }
    return valueText(variables[name]);
  });
}

function referencedNames(text: string): string[] {
  return [...text.matchAll(REFERENCE)].flatMap((match) => (match[1] === undefined ? [] : [match[1]]));
}

function isDefined(variables: Record<string, unknown>, name: string): boolean {
  return Object.hasOwn(variables, name) && variables[name] !== undefined && variables[name] !== null;
}
