/**
 * What counts as progress in a model server's answer: bytes that carry some of it. A server can keep a
 * connection busy without answering, with SSE comments (`: keep-alive`, `: PROCESSING`) or whitespace
 * before or inside a JSON body; counted as progress, those would hold a call until its deadline (ten
 * minutes by default) though the idle timeout is seconds.
 */

const COLON = 0x3a;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;

/**
 * A test for the pieces of one response body, in order: true when a piece holds a byte that is
 * neither whitespace nor part of an SSE comment line (one whose first byte is `:`). A JSON body never
 * starts a line with `:` where it matters: at worst a value after such a colon is not counted, and
 * the next piece is.
 */
export function answerProgress(): (chunk: Uint8Array) => boolean {
  let atLineStart = true;
  let inComment = false;
  return (chunk) => {
    let progressed = false;
    for (const byte of chunk) {
      if (byte === LF || byte === CR) {
        atLineStart = true;
        inComment = false;
        continue;
      }
      if (atLineStart && byte === COLON) inComment = true;
      atLineStart = false;
      if (!inComment && byte !== SPACE && byte !== TAB) progressed = true;
    }
    return progressed;
  };
}
