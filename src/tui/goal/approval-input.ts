/**
 * The approval line as a pure function of the keys: what the user has typed, and the answer Enter
 * gives (`parseApproval`: y, n, y -N, a, or feedback). An empty line does nothing on Enter.
 */
import { parseApproval, type Approval } from '../../autonomous/authorize.js';

/** The keys the line reads (a subset of Ink's `Key`). */
export interface DraftKey {
  return?: boolean;
  backspace?: boolean;
  delete?: boolean;
  ctrl?: boolean;
  meta?: boolean;
  escape?: boolean;
}

/** Most characters of feedback the line takes. */
export const MAX_DRAFT_CHARS = 2000;

/** The draft after one key, and the answer when the key was Enter on a non-empty line. */
export function editDraft(draft: string, input: string, key: DraftKey): { draft: string; answer?: Approval } {
  if (key.return) {
    if (!draft.trim()) return { draft };
    return { draft: '', answer: parseApproval(draft) };
  }
  if (key.backspace || key.delete) return { draft: [...draft].slice(0, -1).join('') };
  if (key.ctrl && input === 'u') return { draft: '' };
  if (key.ctrl || key.meta || key.escape || !input) return { draft };
  // Keys typed faster than they are read arrive as one input, Enter included: a trailing Enter answers.
  const submits = input.length > 1 && /[\r\n]$/.test(input);
  const text = printable((submits ? input.replace(/[\r\n]+$/, '') : input).replace(/\r\n|\r|\n/g, ' '));
  const next = (draft + text).slice(0, MAX_DRAFT_CHARS);
  return submits ? editDraft(next, '', { return: true }) : { draft: next };
}

/** `text` without control characters, which would be invisible in the line. */
function printable(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what this removes
  return text.replace(/[\u0000-\u001F\u007F-\u009F]/g, '');
}
