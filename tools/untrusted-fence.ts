/**
 * The markers that fence untrusted text (a web page, search results) off in what the model reads, and
 * the text with any copy of them taken out, so that the text cannot end its fence early and pose as
 * the run's own words.
 */
export interface Fence {
  readonly begin: string;
  readonly end: string;
  /** `text` with the markers taken out. */
  unmarked(text: string): string;
}

/** The fence of one kind of untrusted text, named in its markers (`PAGE CONTENT`, `SEARCH RESULTS`). */
export function untrustedFence(what: string): Fence {
  const begin = `=== BEGIN UNTRUSTED ${what} ===`;
  const end = `=== END UNTRUSTED ${what} ===`;
  return { begin, end, unmarked: (text) => text.replaceAll(begin, '').replaceAll(end, '') };
}
