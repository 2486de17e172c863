/**
 * Every field of a node as lines for the inspector, in schema order, so a field added to the schema
 * shows up without touching the UI. The fields most nodes use are listed even when empty: seeing that a
 * node has no transition question is as useful as seeing its question. AutoGRAMS' rarer settings
 * (weights, interjection simulation, question prompt…) are listed when set.
 */
import { nodeSpecSchema, type NodeSpec } from '../graph/schema.js';
import { wrapText } from './text.js';

/** One inspector line: a field label starts a field; lines without one continue it. */
export interface FieldLine {
  label?: string;
  text: string;
  /** The field has no value. */
  empty?: boolean;
}

/** Field names in the order the schema declares them. */
export const NODE_FIELDS = Object.keys(nodeSpecSchema.shape) as (keyof NodeSpec)[];

/** The fields listed even when empty. */
export const USUAL_FIELDS: ReadonlySet<keyof NodeSpec> = new Set([
  'name',
  'action',
  'instruction',
  'transitions',
  'transitionQuestion',
  'transitionChoices',
  'booleanCondition',
  'conditionInterjection',
  'userInstructions',
  'category',
  'notes',
  'replyStart',
  'instructionTemplate',
  'transitionContext',
]);

const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/**
 * Lines for every field of `node`, wrapped to `width`. A value that fits beside its label stays on
 * the label's line; longer values and lists go on indented lines below it. List items are lettered
 * A, B, … so transitions, their choices and user instructions line up by letter.
 */
export function nodeFieldLines(node: NodeSpec, width: number): FieldLine[] {
  const lines: FieldLine[] = [];
  for (const field of NODE_FIELDS) {
    const value: unknown = node[field];
    const items = fieldItems(value);
    if (items.length === 0) {
      if (USUAL_FIELDS.has(field)) lines.push({ label: field, text: '—', empty: true });
      continue;
    }
    const first = items[0]!;
    if (!Array.isArray(value) && !first.includes('\n') && field.length + 2 + first.length <= width) {
      lines.push({ label: field, text: first });
      continue;
    }
    lines.push({ label: field, text: '' });
    items.forEach((item, i) => {
      const prefix = Array.isArray(value) ? `${LETTERS[i] ?? String(i + 1)}) ` : '';
      wrapText(item, width - 2 - prefix.length).forEach((text, j) => {
        lines.push({ text: `${j === 0 ? prefix : ' '.repeat(prefix.length)}${text}` });
      });
    });
  }
  return lines;
}

function fieldItems(value: unknown): string[] {
  if (value === undefined || value === null || value === '') return [];
  if (Array.isArray(value)) return value.map(String);
  return [String(value)];
}
