/**
 * Checks an hnswlib index file before hnswlib reads it. hnswlib trusts the file: it loads an index of
 * another dimension and answers NaN, follows a neighbour id past the end of its arrays, and reads the
 * link list of a level an element does not have (a null pointer: SIGSEGV). So every field it will use
 * is checked against what the manifest and the log expect, and what it only trusts of its own files:
 * - the header: M, dimensions, element layout, count and capacity, the level multiplier it draws new
 *   elements' levels with (1/ln M), efConstruction, the entry point and the top level;
 * - every element: its labels (those of the snapshot's memories, each once), its vector (a cosine
 *   space holds unit vectors: finite values within ±1), a deleted mark only on a forgotten memory, and
 *   its levels, none above the top one, which the entry point has;
 * - every link list of every level: its length within the level's maximum, each neighbour an element
 *   of the file that has that level too (a search steps onto it and reads its list of that level).
 * Layout: hnswlib's HierarchicalNSW::saveIndex (hnswalg.h).
 */

const HEADER_BYTES = 96;
const MAX_LEVEL = 64;

/** What hnswlib writes as an empty index's entry point and top level: none (-1). */
const NO_ENTRY_POINT = 0xffff_ffff;

/** A unit vector's values, with room for float32 rounding: as float32 bits, without the sign. */
const MAX_UNIT_BITS = new Uint32Array(new Float32Array([1 + 1e-3]).buffer)[0]!;

/** Deleted mark: the third byte of an element's level-0 link list header (hnswlib's DELETE_MARK). */
const DELETE_MARK = 0x01;

/** The capacity a new index starts with; it doubles when full. */
export const MIN_CAPACITY = 1024;

export interface ExpectedIndex {
  dimensions: number;
  m: number;
  efConstruction: number;
  /** The labels its elements must have, each once: its memories' numbers in the log. */
  labels: readonly number[];
  /** Labels it may hold marked deleted: memories forgotten before it was written. */
  deleted: ReadonlySet<number>;
}

interface Header {
  offsetLevel0: number;
  maxElements: number;
  count: number;
  bytesPerElement: number;
  labelOffset: number;
  dataOffset: number;
  maxLevel: number;
  entryPoint: number;
  maxM: number;
  maxM0: number;
  m: number;
  mult: number;
  efConstruction: number;
}

/** Why `file` cannot be the expected index, or undefined when it can. */
export function indexFileProblem(file: Buffer, expected: ExpectedIndex): string | undefined {
  const check = new IndexFileCheck(expected);
  check.feed(file);
  return check.finish();
}

/**
 * The checks of an index file read once, front to back, in chunks of any size: the header, then each
 * element's level-0 part as it arrives, so that the file need never be held whole; the upper levels,
 * a small tail (about one element in M has one), are kept and checked at the end, since a link there
 * needs the level of the element it leads to. `finish` says the first problem in the order the checks
 * are listed above.
 */
export class IndexFileCheck {
  readonly #expected: ExpectedIndex;
  #header: Header | undefined;
  #headerProblem: string | undefined;
  /** A header's or an element's bytes cut by the end of a chunk. */
  #partial: Buffer = Buffer.alloc(0);
  #elements = 0;
  #elementProblem: string | undefined;
  readonly #upper: Buffer[] = [];
  /** Per label, 1 when the snapshot holds it, 2 once an element has it. */
  readonly #labels: Uint8Array;

  constructor(expected: ExpectedIndex) {
    this.#expected = expected;
    const top = expected.labels.reduce((highest, label) => Math.max(highest, label), -1);
    this.#labels = new Uint8Array(top + 1);
    for (const label of expected.labels) this.#labels[label] = 1;
  }

  /** The next bytes of the file; `chunk` is not kept (what is needed later is copied). */
  feed(chunk: Buffer): void {
    let at = 0;
    if (!this.#header) {
      at = this.#fill(chunk, HEADER_BYTES);
      if (this.#partial.length < HEADER_BYTES) return;
      this.#header = readHeader(this.#partial);
      this.#headerProblem = headerProblem(this.#header, this.#expected);
      this.#partial = Buffer.alloc(0);
    }
    // A header that fails its checks is not read further: its sizes cannot be trusted to walk by.
    if (this.#headerProblem) return;
    const header = this.#header;
    const size = header.bytesPerElement;
    if (this.#partial.length > 0) {
      at += this.#fill(chunk.subarray(at), size);
      if (this.#partial.length < size) return;
      this.#checkElements(aligned(this.#partial), 1);
      this.#partial = Buffer.alloc(0);
    }
    const whole = Math.min(header.count - this.#elements, Math.floor((chunk.length - at) / size));
    if (whole > 0) {
      this.#checkElements(aligned(chunk.subarray(at, at + whole * size)), whole);
      at += whole * size;
    }
    if (at === chunk.length) return;
    if (this.#elements < header.count) this.#partial = Buffer.from(chunk.subarray(at));
    else this.#upper.push(Buffer.from(chunk.subarray(at)));
  }

  /** Why the bytes fed cannot be the expected index, or undefined when they can. */
  finish(): string | undefined {
    const header = this.#header;
    if (!header) return 'it is shorter than an index header';
    if (this.#headerProblem) return this.#headerProblem;
    if (this.#elements < header.count) return 'it is cut short';
    const upper = upperLevels(Buffer.concat(this.#upper), header);
    if (typeof upper === 'string') return upper;
    return (
      levelsProblem(header, upper.levels) ?? this.#elementProblem ?? linksProblem(upper.tail, header, upper)
    );
  }

  /** Moves bytes of `chunk` into #partial until it has `size`; how many it took. */
  #fill(chunk: Buffer, size: number): number {
    const taken = Math.min(size - this.#partial.length, chunk.length);
    this.#partial = Buffer.concat([this.#partial, chunk.subarray(0, taken)]);
    return taken;
  }

  /** Each element's level-0 links, label, deleted mark and vector, the `count` of them `bytes` holds. */
  #checkElements(bytes: Buffer, count: number): void {
    const first = this.#elements;
    this.#elements += count;
    if (this.#elementProblem) return;
    const header = this.#header!;
    const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length >> 2);
    const floats = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length >> 2);
    const stride = header.bytesPerElement >> 2;
    const labelAt = header.labelOffset >> 2;
    const dataAt = header.dataOffset >> 2;
    const dimensions = this.#expected.dimensions;
    const labels = this.#labels;
    for (let i = 0; i < count; i++) {
      const element = first + i;
      const start = i * stride;
      const links = level0Problem(words, start, header.maxM0, header.count);
      if (links) return this.#problem(`element ${element}: ${links}`);
      // A label is 64 bits; ours are 32 (vector-index.ts), so one with high bits is no memory's.
      const label = words[start + labelAt + 1] === 0 ? words[start + labelAt]! : -1;
      const state = label >= 0 ? labels[label] : undefined;
      if (!state)
        return this.#problem(
          `element ${element} has the label ${labelName(words, start + labelAt)}, no memory of its snapshot`,
        );
      if (state === 2) return this.#problem(`two elements have the label ${label}`);
      labels[label] = 2;
      if ((words[start]! >>> 16) & DELETE_MARK && !this.#expected.deleted.has(label))
        return this.#problem(`element ${element} is marked deleted, but its memory was not forgotten`);
      const vector = start + dataAt;
      const end = vector + dimensions;
      // The largest magnitude, compared as float32 bits without their sign: NaN and infinities have
      // every exponent bit set, so they are above any finite limit. Without a branch per value, this
      // loop is most of the check's time at 100,000 vectors, and runs 2.5 times as fast as comparing floats.
      let largest = 0;
      for (let d = vector; d < end; d++) {
        const magnitude = words[d]! & 0x7fff_ffff;
        largest = magnitude > largest ? magnitude : largest;
      }
      if (largest > MAX_UNIT_BITS) {
        const value =
          floats[
            words.subarray(vector, end).findIndex((bits) => (bits & 0x7fff_ffff) > MAX_UNIT_BITS) + vector
          ];
        return this.#problem(`element ${element} has a vector value of ${value}, not one of a unit vector`);
      }
    }
  }

  #problem(problem: string): void {
    this.#elementProblem = problem;
  }
}

function readHeader(file: Buffer): Header {
  const size = (offset: number) => Number(file.readBigUInt64LE(offset));
  return {
    offsetLevel0: size(0),
    maxElements: size(8),
    count: size(16),
    bytesPerElement: size(24),
    labelOffset: size(32),
    dataOffset: size(40),
    maxLevel: file.readInt32LE(48),
    entryPoint: file.readUInt32LE(52),
    maxM: size(56),
    maxM0: size(64),
    m: size(72),
    mult: file.readDoubleLE(80),
    efConstruction: size(88),
  };
}

function headerProblem(header: Header, expected: ExpectedIndex): string | undefined {
  const { m, maxM, maxM0, count, maxElements } = header;
  if (m !== expected.m || maxM !== m || maxM0 !== 2 * m)
    return `it was built with M=${m}, the manifest says ${expected.m}`;
  const dimensions = (header.labelOffset - header.dataOffset) / 4;
  if (dimensions !== expected.dimensions)
    return `its vectors have ${dimensions} dimensions, the manifest says ${expected.dimensions}`;
  if (
    header.offsetLevel0 !== 0 ||
    header.dataOffset !== maxM0 * 4 + 4 ||
    header.bytesPerElement !== header.labelOffset + 8
  )
    return 'its element layout is not the one hnswlib writes';
  if (count !== expected.labels.length)
    return `it holds ${count} elements, the manifest's snapshot ${expected.labels.length}`;
  if (count > maxElements) return 'it holds more elements than its capacity';
  // hnswlib allocates the whole capacity on load; ours never exceeds twice what it holds, or 1,024.
  if (maxElements > Math.max(2 * count, MIN_CAPACITY))
    return `its capacity of ${maxElements} is not one we make`;
  // New elements' levels are drawn with it: a huge one asks for link lists of a huge level.
  const mult = 1 / Math.log(m);
  if (!(Math.abs(header.mult - mult) <= mult * 1e-9))
    return `its level multiplier ${header.mult} is not the one hnswlib makes for M=${m}`;
  // hnswlib raises efConstruction to M.
  const efConstruction = Math.max(expected.efConstruction, expected.m);
  if (header.efConstruction !== efConstruction)
    return `it was built with efConstruction=${header.efConstruction}, the manifest says ${efConstruction}`;
  if (count === 0 && (header.entryPoint !== NO_ENTRY_POINT || header.maxLevel !== -1))
    return 'it holds no elements but has an entry point';
  if (count > 0 && (header.entryPoint >= count || header.maxLevel < 0 || header.maxLevel > MAX_LEVEL))
    return 'its entry point is not one of its elements';
  return undefined;
}

interface UpperLevels {
  /** Each element's top level (0: it has only level 0). */
  levels: number[];
  /** Where each element's first upper-level link list starts in `tail`. */
  starts: number[];
  tail: Buffer;
}

/**
 * After the level-0 part, per element, a byte length, then one link list of maxM per level above 0:
 * `tail` is that part of the file.
 */
function upperLevels(tail: Buffer, header: Header): UpperLevels | string {
  const linksUpper = header.maxM * 4 + 4;
  const levels: number[] = [];
  const starts: number[] = [];
  let at = 0;
  for (let element = 0; element < header.count; element++) {
    if (at + 4 > tail.length) return 'it is cut short';
    const bytes = tail.readUInt32LE(at);
    at += 4;
    if (bytes % linksUpper !== 0 || bytes / linksUpper > header.maxLevel)
      return `element ${element} has upper levels hnswlib cannot have written`;
    if (at + bytes > tail.length) return 'it is cut short';
    levels.push(bytes / linksUpper);
    starts.push(at);
    at += bytes;
  }
  if (at !== tail.length) return 'it has bytes after its last element';
  return { levels, starts, tail };
}

/** A search starts at the entry point on the top level and walks down: both must be the highest. */
function levelsProblem(header: Header, levels: readonly number[]): string | undefined {
  if (header.count === 0) return undefined;
  const top = levels.reduce((highest, level) => Math.max(highest, level), 0);
  if (header.maxLevel !== top) return `its top level is ${header.maxLevel}, its elements' highest ${top}`;
  const entry = levels[header.entryPoint];
  if (entry !== top) return `its entry point has level ${entry}, below its top level ${top}`;
  return undefined;
}

/** Upper-level links: each neighbour must have the level it is linked on. */
function linksProblem(file: Buffer, header: Header, upper: UpperLevels): string | undefined {
  const linksUpper = header.maxM * 4 + 4;
  for (let element = 0; element < header.count; element++) {
    for (let level = 1; level <= upper.levels[element]!; level++) {
      const at = upper.starts[element]! + (level - 1) * linksUpper;
      const problem = linkProblem(file, at, header.maxM, header.count, (id) => upper.levels[id]! >= level);
      if (problem) return `element ${element}, level ${level}: ${problem}`;
    }
  }
  return undefined;
}

/** A link list: a 16-bit length (the next byte holds the deleted mark), then that many neighbour ids. */
function linkProblem(
  file: Buffer,
  at: number,
  max: number,
  count: number,
  hasLevel: (id: number) => boolean = () => true,
): string | undefined {
  const length = file.readUInt16LE(at);
  if (length > max) return `a link list of ${length}, more than ${max}`;
  for (let i = 0; i < length; i++) {
    const id = file.readUInt32LE(at + 4 + i * 4);
    if (id >= count) return 'a link to an element it does not hold';
    if (!hasLevel(id)) return `a link to element ${id}, which does not have that level`;
  }
  return undefined;
}

/** A level-0 link list at word `start`: a 16-bit length (the next byte: the deleted mark), then ids. */
function level0Problem(words: Uint32Array, start: number, max: number, count: number): string | undefined {
  const length = words[start]! & 0xffff;
  if (length > max) return `a link list of ${length}, more than ${max}`;
  for (let i = start + 1; i <= start + length; i++)
    if (words[i]! >= count) return 'a link to an element it does not hold';
  return undefined;
}

/** The 64-bit label at word `at`, as a number. */
function labelName(words: Uint32Array, at: number): number {
  return words[at + 1]! * 2 ** 32 + words[at]!;
}

/** `bytes` where a Float32Array and a Uint32Array can view them (a copy when they are not 4-aligned). */
function aligned(bytes: Buffer): Buffer {
  if (bytes.byteOffset % 4 === 0) return bytes;
  const copy = Buffer.alloc(bytes.length);
  bytes.copy(copy);
  return copy;
}
