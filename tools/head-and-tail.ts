/**
 * A stream's output kept within a byte cap: its beginning and its end, which is where a program says
 * what it is and how it ended, with a note of how much was cut from the middle. The stream itself is
 * read to its end, so a talkative program is not stopped for it.
 */
export class HeadAndTail {
  readonly #half: number;
  readonly #head: Buffer[] = [];
  #headBytes = 0;
  #tail: Buffer = Buffer.alloc(0);
  #total = 0;

  /** Keeps at most `cap` bytes: the first half and the last half of it. */
  constructor(cap: number) {
    this.#half = Math.floor(cap / 2);
  }

  add(chunk: Buffer): void {
    this.#total += chunk.length;
    const toHead = Math.min(chunk.length, this.#half - this.#headBytes);
    if (toHead > 0) {
      this.#head.push(chunk.subarray(0, toHead));
      this.#headBytes += toHead;
    }
    const rest = chunk.subarray(toHead);
    if (rest.length === 0) return;
    const tail = Buffer.concat([this.#tail, rest]);
    this.#tail = tail.subarray(Math.max(0, tail.length - this.#half));
  }

  /** What was kept, as text; where bytes were cut, a line says how many. */
  text(): string {
    const head = Buffer.concat(this.#head).toString('utf8');
    const cut = this.#total - this.#headBytes - this.#tail.length;
    const tail = this.#tail.toString('utf8');
    return cut > 0 ? `${head}\n[… ${cut} bytes cut …]\n${tail}` : `${head}${tail}`;
  }
}
