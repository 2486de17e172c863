/**
 * AutoGRAMS packs small languages into strings: `x = …` assignments, `f(a,b)` callable names, `y = f(x)`
 * calls, and transition strings (`p.*`, `return x`, `$var`, `quit`, `u.n`). They are parsed here, once,
 * when a graph is loaded or edited, into the typed form the interpreter and the linter use.
 */
import type { NodeSpec } from './schema.js';

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const ASSIGNMENT = /^\s*([A-Za-z_][\w]*)\s*=(?!=)\s?([\s\S]*)$/;
const CALL = /^\s*([A-Za-z_][\w]*)\s*\(([\s\S]*)\)\s*$/;

/** Where a transition string leads. */
export type TransitionTarget =
  | { kind: 'node'; name: string }
  | { kind: 'wildcard'; prefix: string }
  | { kind: 'return'; expression?: string }
  | { kind: 'variable'; variable: string }
  | { kind: 'visit'; base: string }
  | { kind: 'quit' };

/** A node name `f(a, b)` makes the node callable as `f` with parameters `a`, `b`. */
export interface Callable {
  fn: string;
  params: string[];
}

/** A function node's instruction `y = f(x, 1)`: call `f` with argument expressions, store in `y`. */
export interface FunctionCall {
  fn: string;
  args: string[];
}

/** A node with its strings parsed. `body` is the instruction without its assignment, `\=` unescaped. */
export interface CompiledNode extends NodeSpec {
  assignTo?: string;
  body: string;
  callable?: Callable;
  call?: FunctionCall;
  targets: TransitionTarget[];
  isInterjection: boolean;
}

/** A problem in one node's strings, found while parsing. */
export interface ParseProblem {
  node: string;
  field: 'name' | 'instruction' | 'transitions';
  message: string;
}

/** Splits `x = rest` (not `x == y`, not `x \= y`); unescapes `\=` in what remains. */
export function parseAssignment(instruction: string): { assignTo?: string; body: string } {
  const match = ASSIGNMENT.exec(instruction);
  if (!match || instruction.trimStart().startsWith('\\')) return { body: unescapeEquals(instruction) };
  const before = instruction.slice(0, instruction.indexOf('='));
  if (before.endsWith('\\')) return { body: unescapeEquals(instruction) };
  return { assignTo: match[1], body: unescapeEquals(match[2] ?? '') };
}

function unescapeEquals(text: string): string {
  return text.replace(/\\=/g, '=');
}

/** `f(a, b)` -> { fn: 'f', params: ['a','b'] }; undefined when the name is not callable. */
export function parseCallable(name: string): Callable | undefined {
  const match = CALL.exec(name);
  if (!match) return undefined;
  const inner = (match[2] ?? '').trim();
  return { fn: match[1]!, params: inner ? inner.split(',').map((p) => p.trim()) : [] };
}

/** `f(x, [1, 2], "a,b")` -> { fn: 'f', args: ['x', '[1, 2]', '"a,b"'] }, splitting on top-level commas. */
export function parseFunctionCall(text: string): FunctionCall | undefined {
  const match = CALL.exec(text);
  if (!match) return undefined;
  return { fn: match[1]!, args: splitTopLevel(match[2] ?? '') };
}

/** Splits on commas outside brackets and string literals. */
export function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quote) {
      current += ch;
      if (ch === '\\') current += text[++i] ?? '';
      else if (ch === quote) quote = undefined;
      continue;
    }
    if (ch === '"' || ch === "'" || ch === '`') quote = ch;
    else if ('([{'.includes(ch)) depth++;
    else if (')]}'.includes(ch)) depth--;
    else if (ch === ',' && depth === 0) {
      parts.push(current.trim());
      current = '';
      continue;
    }
    current += ch;
  }
  if (current.trim()) parts.push(current.trim());
  return parts;
}

/** Parses one transition string. */
export function parseTransition(text: string): TransitionTarget {
  const t = text.trim();
  if (t === 'quit') return { kind: 'quit' };
  if (t === 'return') return { kind: 'return' };
  if (t.startsWith('return ')) return { kind: 'return', expression: t.slice('return '.length).trim() };
  if (t.startsWith('$')) return { kind: 'variable', variable: t.slice(1) };
  if (t.endsWith('.*')) return { kind: 'wildcard', prefix: t.slice(0, -2) };
  if (t.endsWith('.n')) return { kind: 'visit', base: t.slice(0, -2) };
  return { kind: 'node', name: t };
}

/** The most goals a goal-loop run takes (seed 004's five). */
export const MAX_GOALS = 5;

/** A `goal_loop` node's goals: the lines of its instruction (variables embedded), trimmed, blank ones left out. */
export function goalLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

/** A `$var` or conditional text `?{…}`: what a line's rendered text depends on. */
const VARIABLE_TEXT = /(?<!\\)\$[A-Za-z_]|(?<!\\)\?\{/;

/**
 * What is wrong with a `goal_loop` node's goals as written: none at all, or more than a run takes in
 * lines that embed no variable (a line with a `$var` may come out blank, so it is left to the run).
 */
function goalsProblem(body: string): string | undefined {
  const lines = goalLines(body);
  if (lines.length === 0)
    return "a goal_loop node needs goals: write one per line of its instruction (with $vars to use the graph's variables)";
  const fixed = lines.filter((line) => !VARIABLE_TEXT.test(line)).length;
  if (fixed > MAX_GOALS)
    return `a goal_loop node has ${fixed} goals; a goal-loop run takes at most ${MAX_GOALS} (one per line)`;
  return undefined;
}

/** What a `flow` node runs: the flow file (its first line) and the inputs (`name = value`, one a line). */
export interface FlowCall {
  file: string;
  inputs: Record<string, string>;
}

const INPUT_LINE = /^([A-Za-z_]\w*)\s*=\s?(.*)$/;

/** Reads a `flow` node's instruction, or says what is wrong with it. */
export function parseFlowCall(text: string): FlowCall | { problem: string } {
  const [file = '', ...rest] = goalLines(text);
  if (!file.toLowerCase().endsWith('.flow.json'))
    return {
      problem: `a flow node's first line names a flow file (NAME.flow.json), got "${file}"`,
    };
  const inputs: Record<string, string> = {};
  for (const line of rest) {
    const match = INPUT_LINE.exec(line);
    if (!match) return { problem: `a flow node's input line must read "name = value", got "${line}"` };
    inputs[match[1]!] = match[2]!;
  }
  return { file, inputs };
}

const CALL_ACTIONS = new Set(['function', 'local_function', 'global_function']);
const CHAT_ACTIONS = new Set(['chat', 'chat_exact', 'chat_suffix']);

/** True for the three actions that call an autogram function. */
export function isCallAction(action: string): boolean {
  return CALL_ACTIONS.has(action);
}

/** True for the actions that reply to the user and wait (after which interjections are checked). */
export function isChatAction(action: string): boolean {
  return CHAT_ACTIONS.has(action);
}

/**
 * The actions whose instruction is an AIPL template when the graph's `config.aipl` is set: the prose the
 * model or the user reads, and the prompts set_prompt and append_prompt store (rendered every turn).
 */
const AIPL_ACTIONS = new Set([
  ...CHAT_ACTIONS,
  'thought',
  'thought_exact',
  'thought_qa',
  'set_prompt',
  'append_prompt',
]);

export function takesAipl(action: string): boolean {
  return AIPL_ACTIONS.has(action);
}

/** Parses every string of a node; problems are returned, not thrown, so a linter can report them all. */
export function compileNode(spec: NodeSpec): { node: CompiledNode; problems: ParseProblem[] } {
  const problems: ParseProblem[] = [];
  const { assignTo, body } = parseAssignment(spec.instruction);
  const node: CompiledNode = {
    ...spec,
    body,
    targets: spec.transitions.map(parseTransition),
    isInterjection: Boolean(spec.conditionInterjection?.trim()),
  };
  if (assignTo) node.assignTo = assignTo;

  if (spec.name.includes('(')) {
    const callable = parseCallable(spec.name);
    if (!callable || !callable.params.every((p) => IDENTIFIER.test(p))) {
      problems.push({
        node: spec.name,
        field: 'name',
        message: `malformed callable name "${spec.name}"; write f(a, b)`,
      });
    } else node.callable = callable;
  }
  if (isCallAction(spec.action)) {
    const call = parseFunctionCall(body);
    if (call) node.call = call;
    else
      problems.push({
        node: spec.name,
        field: 'instruction',
        message: `a ${spec.action} node's instruction must be a call like "y = f(x)", got "${spec.instruction}"`,
      });
  }
  if (spec.action === 'goal_loop') {
    const message = goalsProblem(body);
    if (message) problems.push({ node: spec.name, field: 'instruction', message });
  }
  // A `$var` may hold the file or an input line; such a node is checked when it runs.
  if (spec.action === 'flow' && !VARIABLE_TEXT.test(body)) {
    const call = parseFlowCall(body);
    if ('problem' in call) problems.push({ node: spec.name, field: 'instruction', message: call.problem });
  }
  for (const target of node.targets) {
    if (target.kind === 'variable' && !IDENTIFIER.test(target.variable))
      problems.push({
        node: spec.name,
        field: 'transitions',
        message: `bad variable transition "$${target.variable}"`,
      });
  }
  return { node, problems };
}
