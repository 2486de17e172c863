/**
 * Syntax checks of a graph's JavaScript (code nodes and boolean conditions), so that code which cannot
 * run is a lint error when a file is validated or a self-edit writes it, not a failure later in the run.
 * The text is compiled by V8 as the sandbox compiles it (a script; a condition in parentheses) and never
 * run: compiling cannot execute any of it.
 */
import { Script } from 'node:vm';
import type { CompiledNode } from './parse.js';

/** What a code text or condition was found to be: undefined when it parses, else the syntax error. */
const checked = new Map<string, string | undefined>();

/** Texts remembered: a graph's code repeats across the lints of its versions. */
const TEXTS_KEPT = 1024;

/** The node's syntax errors: its code (for a code node) and its boolean condition. */
export function codeSyntaxProblems(node: CompiledNode): { field: string; message: string }[] {
  const problems: { field: string; message: string }[] = [];
  if (node.action === 'code' && node.instruction.trim() !== '') {
    const message = codeSyntaxError(node.instruction);
    if (message) problems.push({ field: 'instruction', message });
  }
  const condition = node.booleanCondition?.trim();
  if (condition) {
    const message = codeSyntaxError(`(${condition}\n)`);
    if (message) problems.push({ field: 'booleanCondition', message });
  }
  return problems;
}

/** The syntax error of a script, or undefined when it parses (a flow's after-query code uses it too). */
export function codeSyntaxError(text: string): string | undefined {
  if (checked.has(text)) return checked.get(text);
  let message: string | undefined;
  try {
    new Script(text, { filename: 'code.js' });
  } catch (error) {
    message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  }
  checked.set(text, message);
  if (checked.size > TEXTS_KEPT) checked.delete(checked.keys().next().value!);
  return message;
}
