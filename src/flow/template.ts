/**
 * Flow templates, in AgentKit's own spelling (seed 003, appendix E): `$db.key$` or `$db.a.b$` is a
 * database value (`$db$` the whole database), `$out.NODE$` a dependency's output and `$prompt$` the
 * node's own prompt (in a compose template). Any other `$` is left as written. Values that are not text
 * appear as JSON. A tool node's arguments use the same references (tool-arguments.ts), strictly.
 *
 * A database value that is not there (a key an after-query step writes later, as AgentKit's Crafter
 * prompts read the previous plan on the first step) renders as `None`, AgentKit's own rendering, so a
 * ported prompt reads the same; the runner reports every such reference (unsetReferences), and
 * `validate` warns of keys nothing declares, so a typo is seen. A tool's argument is not text for a
 * model but a value: there a missing one is an error.
 */
import { stringifyValue } from '../engine/template.js';

/** `$db…$`, `$out.NAME$` or `$prompt$`; a path runs to the next `$` on the same line. */
const REFERENCE = /\$(db(?:\.[^$\n]+)?|out\.[\w-]+|prompt)\$/g;

/** How a database value that is not there renders in a prompt, as AgentKit renders it (Python's None). */
const UNSET_VALUE = 'None';

/** What a reference reads from, and what it says when the value is missing. */
export interface TemplateValues {
  db: Record<string, unknown>;
  /** A database value that is not there throws instead of rendering as UNSET_VALUE (tool arguments). */
  strict?: boolean;
  /** Outputs of the node's dependencies, by name. */
  outputs?: ReadonlyMap<string, unknown>;
  /** The node's own prompt, rendered (compose templates only). */
  prompt?: string;
}

/** A reference a text makes, as written between the dollar signs. */
export type Reference =
  | { kind: 'db'; path: string[]; text: string }
  | { kind: 'out'; node: string; text: string }
  | { kind: 'prompt'; text: string };

/** Every reference in `text`, in order. */
export function referencesIn(text: string): Reference[] {
  return [...text.matchAll(REFERENCE)].map(([whole, inner]) => parseReference(inner!, whole));
}

function parseReference(inner: string, text: string): Reference {
  if (inner === 'prompt') return { kind: 'prompt', text };
  if (inner.startsWith('out.')) return { kind: 'out', node: inner.slice(4), text };
  return { kind: 'db', path: inner === 'db' ? [] : inner.slice(3).split('.'), text };
}

/**
 * `text` with every reference replaced. A database value that is not there renders as UNSET_VALUE
 * (unless `strict`); a reference to anything else missing (a node that is not a dependency) throws an
 * Error naming it.
 */
export function renderFlowText(text: string, values: TemplateValues): string {
  return text.replace(REFERENCE, (whole, inner: string) => {
    const ref = parseReference(inner, whole);
    return ref.kind === 'prompt' ? promptOf(ref, values) : stringifyValue(referenceValue(ref, values));
  });
}

/** The one reference `text` is made of, nothing around it; undefined for any other text. */
export function soleReference(text: string): Reference | undefined {
  const [only, ...more] = referencesIn(text);
  return only && more.length === 0 && only.text === text ? only : undefined;
}

/** The value `ref` stands for, as it is (not as text); throws as renderFlowText does. */
export function referenceValue(ref: Reference, values: TemplateValues): unknown {
  if (ref.kind === 'prompt') return promptOf(ref, values);
  if (ref.kind === 'out') {
    if (!values.outputs?.has(ref.node))
      throw new Error(`${ref.text} names "${ref.node}", which is not a dependency of this node`);
    return values.outputs.get(ref.node);
  }
  const found = lookup(values.db, ref.path);
  if (found.ok) return found.value;
  if (!values.strict) return UNSET_VALUE;
  throw new Error(`${ref.text}: the database has no "${ref.path.slice(0, found.depth + 1).join('.')}"`);
}

/** The `$db…$` references of `texts` whose values `db` does not have, each once, in order. */
export function unsetReferences(
  texts: readonly (string | undefined)[],
  db: Record<string, unknown>,
): string[] {
  const unset = texts.flatMap((text) =>
    referencesIn(text ?? '').flatMap((ref) =>
      ref.kind === 'db' && !lookup(db, ref.path).ok ? [ref.text] : [],
    ),
  );
  return [...new Set(unset)];
}

function promptOf(ref: Reference, values: TemplateValues): string {
  if (values.prompt === undefined) throw new Error(`${ref.text} is only for compose templates`);
  return values.prompt;
}

/** The value at `path` in `db`, through objects' own keys and arrays' indexes. */
export function lookup(
  db: unknown,
  path: readonly string[],
): { ok: true; value: unknown } | { ok: false; depth: number } {
  let value = db;
  for (const [depth, key] of path.entries()) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key))
      return { ok: false, depth };
    value = (value as Record<string, unknown>)[key];
  }
  return { ok: true, value };
}
