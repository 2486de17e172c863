/**
 * The typed tree of an AIPL template (seed 002), as parse.ts builds it and the planner and renderer read
 * it. Names are stored lower-cased: AIPL is case-insensitive (`{{NS.Key}}` is `{ns.key}`), except for
 * soft function names, which keep their spelling because the model reads them.
 */

/** Where a construct starts in the template: 1-based line and column. */
export interface Position {
  line: number;
  column: number;
}

/** The special names the system provides (seed: `{char}`, `{user}`, `{assistant}`, `{date}`, `{time}`). */
export type SpecialName = 'char' | 'user' | 'assistant' | 'date' | 'time';

/**
 * What a name in a template reads: the AIPL state (`ns.key`), a special name, or an autogram variable in
 * scope (`vars.name`, the one namespace AIPL reads and never writes).
 */
export type Name =
  | { kind: 'state'; namespace: string; key: string }
  | { kind: 'special'; name: SpecialName }
  | { kind: 'var'; name: string };

/** Text as written, escapes resolved. */
export interface TextPart {
  kind: 'text';
  text: string;
}

/** `{ns.key}`, `{{ns.key}}`, `{ns.key:default}`, `{char}`, `{vars.name}`. */
export interface RefPart {
  kind: 'ref';
  name: Name;
  /** Rendered when the name has no value; absent: nothing is rendered. */
  fallback?: string;
  at: Position;
}

/** A quoted string in an expression or a question: text with references in it. */
export type StringParts = (TextPart | RefPart)[];

/**
 * `(= "question" -> ns.key)` or `(condition ? "question" -> ns.key)`: when the condition holds (always,
 * without one), the model answers the question from the conversation and the answer is stored.
 */
export interface UpdatePart {
  kind: 'update';
  condition?: Expr;
  question: StringParts;
  target: { namespace: string; key: string };
  at: Position;
}

/** `((condition` … `)`: the body is rendered, and its updates run, only while the condition holds. */
export interface BlockPart {
  kind: 'block';
  condition: Expr;
  body: Part[];
  at: Position;
}

export type Part = TextPart | RefPart | UpdatePart | BlockPart;

/** A parsed template: its parts in order, and the text it was parsed from. */
export interface Template {
  parts: Part[];
  source: string;
}

export type CompareOp = '==' | '!=' | '<' | '<=' | '>' | '>=';

/** A C-style expression (seed: boolean algebra and comparison operators). */
export type Expr =
  | { kind: 'literal'; value: number | boolean }
  | { kind: 'string'; parts: StringParts }
  /** A state name (`ns.key`, `vars.name`) or a reference (`{ns.key:fallback}`) read as a value. */
  | { kind: 'name'; name: Name; fallback?: string; at: Position }
  | { kind: 'not'; operand: Expr }
  | { kind: 'and' | 'or'; left: Expr; right: Expr }
  | { kind: 'compare'; op: CompareOp; left: Expr; right: Expr }
  /** An undeclared function: "soft code" whose value the model decides. */
  | { kind: 'call'; fn: string; args: Expr[]; at: Position };
