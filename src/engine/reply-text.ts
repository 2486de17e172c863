/**
 * What happens to a model's reply before anyone sees it (AutoGRAMS' `post_process_responses` and
 * `proc_response`, autograms/autogram_utils.py), without the reference's habit of cutting everything up to
 * the first colon in the first 80 characters, which also ate "Note: the meeting…".
 */

/**
 * The reply without a speaker label the model echoed at its start: the reply start it was asked to
 * continue from (`Agent's reply:`) or the speaker's name (`Agent:`), plain or in bold.
 */
export function stripSpeakerLabel(text: string, labels: readonly string[]): string {
  const trimmed = text.trim();
  for (const label of labels) {
    const bare = label.trim().replace(/:$/, '');
    if (bare === '') continue;
    const pattern = new RegExp(`^(\\*\\*)?${escapeRegExp(bare)}:(\\*\\*)?\\s*`, 'i');
    const match = pattern.exec(trimmed);
    if (match) return trimmed.slice(match[0].length).trim();
  }
  return trimmed;
}

/**
 * A chat_suffix reply that ends with `required` word for word. The model was asked to end its reply with
 * the bold text; where its reply shares enough of the text's first half, the reply is kept up to that
 * point and the text completes it; otherwise the text alone is the reply. Bold markers are dropped.
 */
export function endWithRequired(reply: string, required: string): string {
  const text = reply.replaceAll('**', '');
  const overlap = longestCommonSubstring(text, required.slice(0, Math.floor(required.length / 2)));
  if (overlap.length <= Math.min(40, Math.floor(required.length / 3))) return required;
  return text.slice(0, text.indexOf(overlap)) + required.slice(required.indexOf(overlap));
}

/** The longest string found in both `a` and `b` (the first such in `a` on a tie). */
function longestCommonSubstring(a: string, b: string): string {
  let best = 0;
  let end = 0;
  let previous = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    const row = new Array<number>(b.length + 1).fill(0);
    for (let j = 1; j <= b.length; j++) {
      if (a[i - 1] !== b[j - 1]) continue;
      row[j] = previous[j - 1]! + 1;
      if (row[j]! > best) {
        best = row[j]!;
        end = i;
      }
    }
    previous = row;
  }
  return a.slice(end - best, end);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
