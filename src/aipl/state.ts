/**
 * AIPL's state (seed 002): an append-only log of string values, in the order they were stored; the last
 * value of a name wins. It lives in the conversation state (`state.aipl`), so it is saved and resumed with
 * the conversation, and shown by `--json`, `--trace`, the TUI inspector and `history`.
 */
import { z } from 'zod';
import { STATE_NAME } from './names.js';

/** One stored answer: `name` is `namespace.key`, lower-cased. */
export interface AiplEntry {
  name: string;
  value: string;
  /** The turn it was stored in: how many user replies the conversation had received. */
  turn: number;
  /** The question the model answered, as it was asked. */
  question: string;
}

export interface AiplState {
  /** User replies received so far; updates, and the answers cached for them, belong to a turn. */
  turn: number;
  log: AiplEntry[];
}

export const aiplStateSchema = z.object({
  turn: z.number().int().nonnegative(),
  log: z.array(
    z.object({
      name: z.string().regex(/^[a-z0-9_]+\.[a-z0-9_]+$/, 'expected a name like ns.key'),
      value: z.string(),
      turn: z.number().int().nonnegative(),
      question: z.string(),
    }),
  ),
});

/** Latest values by name, as of the log's length when they were read (never changed once stored). */
const latest = new WeakMap<readonly AiplEntry[], { length: number; values: Map<string, string> }>();

export function newAiplState(): AiplState {
  return { turn: 0, log: [] };
}

/** A copy whose log can grow without growing `state`'s; the entries are shared, as nothing changes them. */
export function copyAiplState(state: AiplState): AiplState {
  const log = [...state.log];
  const known = latest.get(state.log);
  if (known?.length === log.length) latest.set(log, known);
  return { turn: state.turn, log };
}

/**
 * The value of each name: the last one stored. Read incrementally, so reading it every step costs what
 * the log grew by, not its whole length.
 */
export function latestValues(log: readonly AiplEntry[]): ReadonlyMap<string, string> {
  const known = latest.get(log);
  if (known && known.length === log.length) return known.values;
  const values = known && known.length < log.length ? new Map(known.values) : new Map<string, string>();
  for (let i = known && known.length < log.length ? known.length : 0; i < log.length; i++)
    values.set(log[i]!.name, log[i]!.value);
  latest.set(log, { length: log.length, values });
  return values;
}

/** The latest values as nested objects, `{ ns: { key: value } }`: how autogram code reads them (`aipl`). */
export function valuesByNamespace(log: readonly AiplEntry[]): Record<string, Record<string, string>> {
  const tree: Record<string, Record<string, string>> = Object.create(null);
  for (const [name, value] of latestValues(log)) {
    const [namespace, key] = name.split('.') as [string, string];
    (tree[namespace] ??= Object.create(null))[key] = value;
  }
  return tree;
}

/** The longest value stored from outside a template (code, the command line): a prompt carries it. */
export const MAX_SET_CHARS = 20_000;

/**
 * Stores `value` under `name` (`ns.key`) from outside a template, as an update stores an answer: at the
 * end of the log, in the state's turn, `source` (who set it) in place of the question. A string is
 * stored as it is, a number or boolean as text, anything else as JSON. Throws an Error a user can act
 * on for a name that is not `ns.key`, a `vars.` name (those are the autogram's variables), no value, or
 * a value past MAX_SET_CHARS.
 */
export function setValue(state: AiplState, name: unknown, value: unknown, source: string): AiplEntry {
  if (typeof name !== 'string' || !STATE_NAME.test(name))
    throw new Error(`aipl.set: ${JSON.stringify(name)} is not a name like "ns.key" (letters, digits, _)`);
  const lower = name.toLowerCase();
  if (lower.startsWith('vars.'))
    throw new Error(
      `aipl.set: ${name} is an autogram variable, which templates read as it is; set the variable`,
    );
  if (value === undefined || value === null) throw new Error(`aipl.set: ${name} needs a value`);
  const text =
    typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  if (text.length > MAX_SET_CHARS)
    throw new Error(`aipl.set: the value of ${name} has ${text.length} characters; at most ${MAX_SET_CHARS}`);
  const entry = { name: lower, value: text, turn: state.turn, question: source };
  state.log.push(entry);
  return entry;
}
