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

/** A unit vector's values, with room for float32 rounding. */
const MAX_UNIT_VALUE = 1 + 1e-3;

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
  if (file.length < HEADER_BYTES) return 'it is shorter than an index header';
  const header = readHeader(file);
  const problem = headerProblem(header, expected);
  if (problem) return problem;
  const level0End = HEADER_BYTES + header.count * header.bytesPerElement;
  if (file.length < level0End) return 'it is cut short';
  const upper = upperLevels(file, header, level0End);
  if (typeof upper === 'string') return upper;
  return (
    levelsProblem(header, upper.levels) ??
    elementsProblem(file, header, expected) ??
    linksProblem(file, header, upper)
  );
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
  /** Where each element's first upper-level link list starts. */
  starts: number[];
}

/** Per element, a byte length, then one link list of maxM per level above 0. */
function upperLevels(file: Buffer, header: Header, level0End: number): UpperLevels | string {
  const linksUpper = header.maxM * 4 + 4;
  const levels: number[] = [];
  const starts: number[] = [];
  let at = level0End;
  for (let element = 0; element < header.count; element++) {
    if (at + 4 > file.length) return 'it is cut short';
    const bytes = file.readUInt32LE(at);
    at += 4;
    if (bytes % linksUpper !== 0 || bytes / linksUpper > header.maxLevel)
      return `element ${element} has upper levels hnswlib cannot have written`;
    if (at + bytes > file.length) return 'it is cut short';
    levels.push(bytes / linksUpper);
    starts.push(at);
    at += bytes;
  }
  if (at !== file.length) return 'it has bytes after its last element';
  return { levels, starts };
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

/** Each element's level-0 links, label, deleted mark and vector. */
function elementsProblem(file: Buffer, header: Header, expected: ExpectedIndex): string | undefined {
  const labels = new Set(expected.labels);
  const seen = new Set<number>();
  const floats = floatsOf(file);
  const dimensions = expected.dimensions;
  for (let element = 0; element < header.count; element++) {
    const at = HEADER_BYTES + element * header.bytesPerElement;
    const links = linkProblem(file, at, header.maxM0, header.count);
    if (links) return `element ${element}: ${links}`;
    const label = Number(file.readBigUInt64LE(at + header.labelOffset));
    if (!labels.has(label)) return `element ${element} has the label ${label}, no memory of its snapshot`;
    if (seen.has(label)) return `two elements have the label ${label}`;
    seen.add(label);
    if (file[at + 2]! & DELETE_MARK && !expected.deleted.has(label))
      return `element ${element} is marked deleted, but its memory was not forgotten`;
    const first = (at + header.dataOffset) / 4;
    for (let d = first; d < first + dimensions; d++)
      if (!(Math.abs(floats[d]!) <= MAX_UNIT_VALUE))
        return `element ${element} has a vector value of ${floats[d]}, not one of a unit vector`;
  }
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

/** The file as float32s (vectors are 4-aligned in it), copied when the buffer itself is not aligned. */
function floatsOf(file: Buffer): Float32Array {
  const length = Math.floor(file.length / 4);
  if (file.byteOffset % 4 === 0) return new Float32Array(file.buffer, file.byteOffset, length);
  const copy = new Uint8Array(length * 4);
  copy.set(file.subarray(0, length * 4));
  return new Float32Array(copy.buffer);
}
