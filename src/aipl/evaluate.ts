/**
 * What a template needs from the model, and what it decides once it has the answers: pure functions of
 * (template, scope, answers known so far). The phase (phase.ts) calls them, asks the model for what they
 * say is missing, all at once, and calls them again until nothing is; the renderer reads their decisions.
 *
 * Values are strings as the seed stores them, read as numbers or booleans by context: a comparison with a
 * number reads both sides as numbers, `&&`, `||`, `!` and conditions read booleans. Text that plainly is
 * a number or a yes/no needs no model; other text ("two kids") is coerced by asking it. An unset name is
 * empty: no number, and false.
 */
import type {
  BlockPart,
  CompareOp,
  Expr,
  Name,
  Part,
  RefPart,
  SpecialName,
  StringParts,
  UpdatePart,
} from './ast.js';

/** Something only the model can tell; `key` identifies it within a turn (the cache's key). */
export type Ask =
  /** An update's question, answered from the conversation. */
  | { kind: 'question'; key: string; text: string }
  /** A soft function's value: `truth` by the yes/no classifier, `number` or `text` by the chatbot. */
  | { kind: 'soft'; key: string; fn: string; call: string; as: 'truth' | 'number' | 'text' }
  /** A stored string read as a number or a boolean. */
  | { kind: 'coerce'; key: string; text: string; as: 'number' | 'boolean' };

export type Value = string | number | boolean | undefined;

/** What names read. */
export interface Scope {
  /** The AIPL state's latest values, by `ns.key`. */
  values: ReadonlyMap<string, string>;
  /** The autogram's variables in scope, read by `vars.name`. */
  vars: Readonly<Record<string, unknown>>;
  specials: Readonly<Record<SpecialName, string>>;
}

/** Answers the model gave, by Ask key. */
export type Answers = Pick<ReadonlyMap<string, Value>, 'has' | 'get'>;

/** A value, or the asks it waits for. */
type Result<T> = { value: T } | { needs: Ask[] };

const NUMERIC = /^\s*[-+]?(\d+(\.\d*)?|\.\d+)\s*$/;
const TRUE = /^\s*(true|yes|y|1)\s*$/i;
const FALSE = /^\s*(false|no|n|0|none|unknown)?\s*$/i;

/** A name's value; a state name or variable that is not set is undefined. */
function readName(name: Name, scope: Scope): Value {
  switch (name.kind) {
    case 'special':
      return scope.specials[name.name];
    case 'state':
      return scope.values.get(`${name.namespace}.${name.key}`);
    case 'var': {
      const value = readVar(scope.vars, name.name);
      if (value === undefined || value === null) return undefined;
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
      return JSON.stringify(value);
    }
  }
}

/** The variable spelled `name`, or else the only one spelled so ignoring case (AIPL is case-insensitive). */
function readVar(vars: Readonly<Record<string, unknown>>, name: string): unknown {
  if (Object.hasOwn(vars, name)) return vars[name];
  const matches = Object.keys(vars).filter((k) => k.toLowerCase() === name.toLowerCase());
  return matches.length === 1 ? vars[matches[0]!] : undefined;
}

/** A value as text in a prompt: numbers and booleans as written, nothing as ''. */
function asText(value: Value): string {
  return value === undefined ? '' : String(value);
}

/** A reference's text: its value, or its fallback when it has none. */
export function refText(ref: Pick<RefPart, 'name' | 'fallback'>, scope: Scope): string {
  const value = readName(ref.name, scope);
  return value === undefined || value === '' ? (ref.fallback ?? '') : asText(value);
}

/** A quoted string with its references filled in. */
function stringText(parts: StringParts, scope: Scope): string {
  return parts.map((part) => (part.kind === 'text' ? part.text : refText(part, scope))).join('');
}

function coerceKey(as: 'number' | 'boolean', text: string): string {
  return `coerce:${as}:${text.trim()}`;
}

function toNumber(value: Value, answers: Answers): Result<number> {
  if (typeof value === 'number') return { value };
  if (typeof value === 'boolean') return { value: value ? 1 : 0 };
  if (value === undefined || value.trim() === '') return { value: NaN };
  if (NUMERIC.test(value)) return { value: Number(value) };
  const key = coerceKey('number', value);
  if (answers.has(key)) return { value: Number(answers.get(key)) };
  return { needs: [{ kind: 'coerce', key, text: value.trim(), as: 'number' }] };
}

function toBoolean(value: Value, answers: Answers): Result<boolean> {
  if (typeof value === 'boolean') return { value };
  if (typeof value === 'number') return { value: value !== 0 && !Number.isNaN(value) };
  if (value === undefined || FALSE.test(value)) return { value: false };
  if (TRUE.test(value)) return { value: true };
  const key = coerceKey('boolean', value);
  if (answers.has(key)) return { value: answers.get(key) === true };
  return { needs: [{ kind: 'coerce', key, text: value.trim(), as: 'boolean' }] };
}

/** What an expression is read as, where that is known before it is evaluated. */
type Kind = 'truth' | 'number' | 'text';

function staticKind(expr: Expr): Kind | undefined {
  switch (expr.kind) {
    case 'literal':
      return typeof expr.value === 'number' ? 'number' : 'truth';
    case 'string':
      return 'text';
    case 'not':
    case 'and':
    case 'or':
    case 'compare':
      return 'truth';
    default:
      return undefined;
  }
}

/** A value as an argument in the call the model reads: strings quoted. */
function asArgument(value: Value): string {
  return typeof value === 'string' ? JSON.stringify(value) : value === undefined ? '""' : String(value);
}

function evaluate(expr: Expr, as: Kind, scope: Scope, answers: Answers): Result<Value> {
  switch (expr.kind) {
    case 'literal':
      return { value: expr.value };
    case 'string':
      return { value: stringText(expr.parts, scope) };
    case 'name': {
      const value = readName(expr.name, scope);
      return { value: value === undefined && expr.fallback !== undefined ? expr.fallback : value };
    }
    case 'not': {
      const operand = truth(expr.operand, scope, answers);
      return 'needs' in operand ? operand : { value: !operand.value };
    }
    case 'and':
    case 'or': {
      // C's short circuit: the right side is not asked when the left decides.
      const left = truth(expr.left, scope, answers);
      if ('needs' in left || left.value === (expr.kind === 'or')) return left;
      return truth(expr.right, scope, answers);
    }
    case 'compare':
      return compare(expr.op, expr.left, expr.right, scope, answers);
    case 'call': {
      const args = expr.args.map((arg) => evaluate(arg, staticKind(arg) ?? 'text', scope, answers));
      const waiting = args.flatMap((arg) => ('needs' in arg ? arg.needs : []));
      if (waiting.length > 0) return { needs: waiting };
      const call = `${expr.fn}(${args.map((arg) => asArgument((arg as { value: Value }).value)).join(', ')})`;
      const key = `soft:${as}:${call}`;
      if (answers.has(key)) return { value: answers.get(key) };
      return { needs: [{ kind: 'soft', key, fn: expr.fn, call, as }] };
    }
  }
}

function truth(expr: Expr, scope: Scope, answers: Answers): Result<boolean> {
  const result = evaluate(expr, 'truth', scope, answers);
  return 'needs' in result ? result : toBoolean(result.value, answers);
}

function compare(op: CompareOp, left: Expr, right: Expr, scope: Scope, answers: Answers): Result<boolean> {
  const ordering = op !== '==' && op !== '!=';
  const kind: Kind = ordering ? 'number' : (staticKind(left) ?? staticKind(right) ?? 'text');
  const sides = [evaluate(left, kind, scope, answers), evaluate(right, kind, scope, answers)];
  const waiting = sides.flatMap((side) => ('needs' in side ? side.needs : []));
  if (waiting.length > 0) return { needs: waiting };
  const [a, b] = sides.map((side) => (side as { value: Value }).value) as [Value, Value];
  const as = ordering ? 'number' : sameKind(kind, a, b);
  if (as === 'text') {
    const equal = asText(a).trim().toLowerCase() === asText(b).trim().toLowerCase();
    return { value: op === '==' ? equal : !equal };
  }
  const read = as === 'number' ? toNumber : toBoolean;
  const coerced = [read(a, answers), read(b, answers)];
  const pending = coerced.flatMap((side) => ('needs' in side ? side.needs : []));
  if (pending.length > 0) return { needs: pending };
  const [x, y] = coerced.map((side) => Number((side as { value: number | boolean }).value)) as [
    number,
    number,
  ];
  const outcome = { '==': x === y, '!=': x !== y, '<': x < y, '<=': x <= y, '>': x > y, '>=': x >= y }[op];
  return { value: outcome };
}

/** How an equality compares: as numbers or booleans when either side is one, else as text. */
function sameKind(kind: Kind, a: Value, b: Value): Kind {
  if (kind !== 'text') return kind;
  if (typeof a === 'number' || typeof b === 'number') return 'number';
  if (typeof a === 'boolean' || typeof b === 'boolean') return 'truth';
  return 'text';
}

/** A condition's outcome, or the asks it waits for. */
function decide(condition: Expr, scope: Scope, answers: Answers): Result<boolean> {
  return truth(condition, scope, answers);
}

/** An update whose condition holds, with its question as it will be asked. */
export interface DueUpdate {
  update: UpdatePart;
  question: string;
  /** The Ask key of its answer. */
  key: string;
}

/** What a walk of a template found: blocks decided, updates due, and what it still waits for. */
export interface Walk {
  shown: Set<BlockPart>;
  due: DueUpdate[];
  needs: Ask[];
}

/**
 * Walks the template in order: each block's condition decides whether its body is walked; with `asking`,
 * each update whose condition holds is due, its question asked unless `answers` has it. A block or update
 * waiting on an answer contributes its asks, and what lies inside a waiting block is not walked yet.
 */
export function walkTemplate(parts: readonly Part[], scope: Scope, answers: Answers, asking: boolean): Walk {
  const walk: Walk = { shown: new Set(), due: [], needs: [] };
  visit(parts, scope, answers, walk, asking);
  walk.needs = unique(walk.needs);
  return walk;
}

function visit(parts: readonly Part[], scope: Scope, answers: Answers, walk: Walk, asking: boolean): void {
  for (const part of parts) {
    if (part.kind === 'block') {
      const decided = decide(part.condition, scope, answers);
      if ('needs' in decided) walk.needs.push(...decided.needs);
      else if (decided.value) {
        walk.shown.add(part);
        visit(part.body, scope, answers, walk, asking);
      }
    } else if (part.kind === 'update' && asking) {
      const decided = part.condition ? decide(part.condition, scope, answers) : { value: true };
      if ('needs' in decided) walk.needs.push(...decided.needs);
      else if (decided.value) {
        const question = stringText(part.question, scope);
        const key = `question:${question}`;
        walk.due.push({ update: part, question, key });
        if (!answers.has(key)) walk.needs.push({ kind: 'question', key, text: question });
      }
    }
  }
}

function unique(asks: Ask[]): Ask[] {
  const seen = new Map<string, Ask>();
  for (const ask of asks) if (!seen.has(ask.key)) seen.set(ask.key, ask);
  return [...seen.values()];
}
