/**
 * What a template does, at a glance: how many updates, blocks and references it holds, the names it reads
 * and writes, and the soft functions it calls. A pure walk of the parsed tree, asking nothing: what it
 * lists is everything the template could touch, whichever blocks a conversation ends up showing.
 */
import type { Expr, Name, Part, StringParts, Template } from './ast.js';

/** A template's summary, as `meta-agent aipl check` prints it. Lists keep the order of first use. */
export interface TemplateOutline {
  /** Updates, `(= …)` and `(condition ? …)`, at any depth. */
  updates: number;
  /** Blocks, `((condition …)`, at any depth. */
  blocks: number;
  /**
   * Places that read a name: `{…}` in text and in quoted strings, and names in conditions and arguments,
   * the special names included.
   */
  references: number;
  /**
   * Names whose values the template reads: state names as `ns.key` (lower-cased, as AIPL stores them)
   * and the autogram's variables as `vars.name`. The special names ({char}, {date}…) are always set, so
   * they are not listed.
   */
  reads: string[];
  /** State names its updates store into. */
  writes: string[];
  /** Soft functions it calls, spelled as written (the model reads the spelling). */
  softFunctions: string[];
}

/** Walks `template` and summarizes it. */
export function outlineTemplate(template: Template): TemplateOutline {
  const counts = { updates: 0, blocks: 0, references: 0 };
  const reads = new Set<string>();
  const writes = new Set<string>();
  const softFunctions = new Set<string>();

  const read = (name: Name): void => {
    counts.references += 1;
    if (name.kind === 'state') reads.add(`${name.namespace}.${name.key}`);
    else if (name.kind === 'var') reads.add(`vars.${name.name}`);
  };
  const visitString = (parts: StringParts): void => {
    for (const part of parts) if (part.kind === 'ref') read(part.name);
  };
  const visitExpr = (expr: Expr): void => {
    switch (expr.kind) {
      case 'literal':
        return;
      case 'string':
        return visitString(expr.parts);
      case 'name':
        return read(expr.name);
      case 'not':
        return visitExpr(expr.operand);
      case 'and':
      case 'or':
      case 'compare':
        visitExpr(expr.left);
        return visitExpr(expr.right);
      case 'call':
        softFunctions.add(expr.fn);
        return expr.args.forEach(visitExpr);
    }
  };
  const visitParts = (parts: readonly Part[]): void => {
    for (const part of parts) {
      switch (part.kind) {
        case 'text':
          break;
        case 'ref':
          read(part.name);
          break;
        case 'update':
          counts.updates += 1;
          if (part.condition) visitExpr(part.condition);
          visitString(part.question);
          writes.add(`${part.target.namespace}.${part.target.key}`);
          break;
        case 'block':
          counts.blocks += 1;
          visitExpr(part.condition);
          visitParts(part.body);
          break;
      }
    }
  };

  visitParts(template.parts);
  return { ...counts, reads: [...reads], writes: [...writes], softFunctions: [...softFunctions] };
}
