/**
 * `$var` embedding (paper §2.4.1): `$name` in an instruction, a transition question, a transition choice or
 * a transition string is replaced by the variable's value as text. `\$` is a literal dollar sign; a `$` not
 * followed by an identifier start (as in `$5`) is left alone.
 */
import { UserError } from '../errors.js';

const REFERENCE = /\\\$|\$([A-Za-z_][A-Za-z0-9_]*)/g;

/** A variable's value as prompt text: strings as they are, numbers and booleans as written, the rest as JSON. */
export function stringifyValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return 'undefined';
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return JSON.stringify(value) ?? String(value);
}

/**
 * Embeds variables into `text`. An unknown variable is the graph author's mistake: the error names the node
 * and the field, and lists what is in scope.
 */
export function renderTemplate(
  text: string,
  variables: Record<string, unknown>,
  where: { node: string; field: string },
): string {
  return text.replace(REFERENCE, (_match, name: string | undefined) => {
    if (name === undefined) return '$';
    if (!Object.hasOwn(variables, name)) {
      const known = Object.keys(variables).filter((k) => !k.startsWith('_'));
      throw new UserError(
        `node "${where.node}": ${where.field} uses $${name}, but no variable "${name}" is in scope`,
        1,
        known.length ? `variables in scope: ${known.join(', ')}` : 'no variables are in scope here',
      );
    }
    return stringifyValue(variables[name]);
  });
}
