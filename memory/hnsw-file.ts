/**
 * Checks an hnswlib index file before hnswlib reads it. hnswlib trusts the file: it loads an index of
 * another dimension and answers NaN, and a neighbour id past the end of its arrays is read as memory.
 * So every field it will use is checked against what the manifest expects, and every link list of
 * every level is walked: its length within the level's maximum, each neighbour an element of the file.
 * Layout: hnswlib's HierarchicalNSW::saveIndex (hnswalg.h).
 */

const HEADER_BYTES = 96;
const MAX_LEVEL = 64;

/** The capacity a new index starts with; it doubles when full. */
export const MIN_CAPACITY = 1024;

export interface ExpectedIndex {
  dimensions: number;
  m: number;
  /** Elements the snapshot holds. */
  count: number;
}

/** Why `file` cannot be the expected index, or undefined when it can. */
export function indexFileProblem(file: Buffer, expected: ExpectedIndex): string | undefined {
  if (file.length < HEADER_BYTES) return 'it is shorter than an index header';
  const size = (offset: number) => Number(file.readBigUInt64LE(offset));
  const offsetLevel0 = size(0);
  const maxElements = size(8);
  const count = size(16);
  const bytesPerElement = size(24);
  const labelOffset = size(32);
  const dataOffset = size(40);
  const maxLevel = file.readInt32LE(48);
  const entryPoint = file.readUInt32LE(52);
  const maxM = size(56);
  const maxM0 = size(64);
  const m = size(72);
  const linksLevel0 = maxM0 * 4 + 4;
  if (m !== expected.m || maxM !== m || maxM0 !== 2 * m)
    return `it was built with M=${m}, the manifest says ${expected.m}`;
  if (labelOffset - dataOffset !== expected.dimensions * 4)
    return `its vectors have ${(labelOffset - dataOffset) / 4} dimensions, the manifest says ${expected.dimensions}`;
  if (offsetLevel0 !== 0 || dataOffset !== linksLevel0 || bytesPerElement !== labelOffset + 8)
    return 'its element layout is not the one hnswlib writes';
  if (count !== expected.count)
    return `it holds ${count} elements, the manifest's snapshot ${expected.count}`;
  if (count > maxElements) return 'it holds more elements than its capacity';
  // hnswlib allocates the whole capacity on load; ours never exceeds twice what it holds, or 1,024.
  if (maxElements > Math.max(2 * count, MIN_CAPACITY))
    return `its capacity of ${maxElements} is not one we make`;
  if (count > 0 && (entryPoint >= count || maxLevel < 0 || maxLevel > MAX_LEVEL))
    return 'its entry point is not one of its elements';
  const level0End = HEADER_BYTES + count * bytesPerElement;
  if (file.length < level0End) return 'it is cut short';
  for (let element = 0; element < count; element++) {
    const at = HEADER_BYTES + element * bytesPerElement;
    const problem = linkProblem(file, at, maxM0, count);
    if (problem) return `element ${element}: ${problem}`;
  }
  // Upper levels: per element, a byte length, then one link list of maxM per level above 0.
  const linksUpper = maxM * 4 + 4;
  let at = level0End;
  for (let element = 0; element < count; element++) {
    if (at + 4 > file.length) return 'it is cut short';
    const bytes = file.readUInt32LE(at);
    at += 4;
    if (bytes % linksUpper !== 0 || bytes / linksUpper > maxLevel)
      return `element ${element} has upper levels hnswlib cannot have written`;
    if (at + bytes > file.length) return 'it is cut short';
    for (let level = 0; level < bytes / linksUpper; level++) {
      const problem = linkProblem(file, at + level * linksUpper, maxM, count);
      if (problem) return `element ${element}, level ${level + 1}: ${problem}`;
    }
    at += bytes;
  }
  if (at !== file.length) return 'it has bytes after its last element';
  return undefined;
}

/** A link list: a 16-bit length (the upper bits hold the deleted mark), then that many neighbour ids. */
function linkProblem(file: Buffer, at: number, max: number, count: number): string | undefined {
  const length = file.readUInt16LE(at);
  if (length > max) return `a link list of ${length}, more than ${max}`;
  for (let i = 0; i < length; i++)
    if (file.readUInt32LE(at + 4 + i * 4) >= count) return 'a link to an element it does not hold';
  return undefined;
}
