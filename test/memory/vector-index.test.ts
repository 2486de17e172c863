import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import hnswlib from 'hnswlib-node';
import { describe, expect, it } from 'vitest';
import { IndexFileCheck, indexFileProblem, type ExpectedIndex } from '../../memory/hnsw-file.js';
import { IndexFileRejected, VectorIndex } from '../../memory/vector-index.js';

const shape = { dimensions: 8, m: 16, efConstruction: 100 };
const unit = (i: number, dimensions = 8) =>
  Array.from({ length: dimensions }, (_, d) => Math.sin(i * 7.3 + d * 1.1) + (d === i % dimensions ? 2 : 0));

function cosine(a: number[], b: number[]): number {
  const dot = a.reduce((sum, value, i) => sum + value * b[i]!, 0);
  return dot / (Math.hypot(...a) * Math.hypot(...b));
}

async function written(index: VectorIndex): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), 'hnsw-')), 'index.hnsw');
  await index.write(path);
  return path;
}

describe('vector index', () => {
  it('refuses labels that are not 32-bit unsigned integers, which hnswlib would wrap onto others', () => {
    // What hnswlib-node itself does with 2^32: label 0 is silently replaced.
    const raw = new hnswlib.HierarchicalNSW('cosine', 8);
    raw.initIndex({ maxElements: 4 });
    raw.addPoint(unit(0), 0);
    raw.addPoint(unit(1), 2 ** 32);
    expect(raw.getIdsList()).toEqual([0]);
    expect(cosine(raw.getPoint(0), unit(1))).toBeCloseTo(1, 5);

    const index = VectorIndex.create(shape);
    index.add(0, unit(0));
    for (const label of [2 ** 32, -1, 1.5, Number.NaN])
      expect(() => index.add(label, unit(1))).toThrow(/is not a 32-bit unsigned integer/);
    index.add(2 ** 32 - 1, unit(1));
    expect(index.size).toBe(2);
    expect(index.search(unit(0), 1)[0]!.label).toBe(0);
  });

  it('grows before it is full instead of failing on the next add', () => {
    const index = VectorIndex.create(shape, 16);
    for (let i = 0; i < 2500; i++) index.add(i, unit(i));
    expect(index.size).toBe(2500);
    expect(index.search(unit(2499), 1)[0]!.label).toBe(2499);
  });

  it('refuses vectors of the wrong length, with a value that is not finite, or of zeros', () => {
    const index = VectorIndex.create(shape);
    expect(() => index.add(0, [1, 2, 3])).toThrow('a vector of 3 dimensions for an index of 8');
    expect(() => index.add(0, [1, Number.NaN, 0, 0, 0, 0, 0, 0])).toThrow(/not a finite number/);
    expect(() => index.add(0, new Array(8).fill(0))).toThrow(/zeros/);
  });

  it('leaves deleted elements out of its size and its answers', () => {
    const index = VectorIndex.create(shape);
    for (let i = 0; i < 10; i++) index.add(i, unit(i));
    index.remove(3);
    index.remove(3);
    expect(index.size).toBe(9);
    expect(index.deletedCount).toBe(1);
    expect(index.search(unit(3), 10).map((hit) => hit.label)).not.toContain(3);
  });

  it('loads its own file back, with the same answers and the deletions kept', async () => {
    const index = VectorIndex.create(shape);
    for (let i = 0; i < 300; i++) index.add(i, unit(i));
    index.remove(7);
    const path = await written(index);
    const loaded = await VectorIndex.load(path, [await readFile(path)], shape, 300, [7]);
    expect(loaded.size).toBe(299);
    for (const i of [0, 50, 299]) expect(loaded.search(unit(i), 5)).toEqual(index.search(unit(i), 5));
  });

  it('never hands hnswlib a file of another dimension, which it would read into NaN answers', async () => {
    const small = VectorIndex.create({ ...shape, dimensions: 8 });
    for (let i = 0; i < 20; i++) small.add(i, unit(i));
    const path = await written(small);
    // hnswlib itself: reads it without a word.
    const raw = new hnswlib.HierarchicalNSW('cosine', 16);
    await raw.readIndex(path);
    expect(raw.getCurrentCount()).toBe(20);

    await expect(
      VectorIndex.load(path, [await readFile(path)], { ...shape, dimensions: 16 }, 20, []),
    ).rejects.toThrow(new IndexFileRejected('its vectors have 8 dimensions, the manifest says 16'));
  });

  it('rejects damaged and crafted files before hnswlib reads them', async () => {
    const index = VectorIndex.create(shape);
    for (let i = 0; i < 50; i++) index.add(i, unit(i));
    const file = await readFile(await written(index));
    const expected = { ...shape, labels: labels(50), deleted: new Set<number>() };
    expect(indexFileProblem(file, expected)).toBeUndefined();

    expect(indexFileProblem(file.subarray(0, 40), expected)).toBe('it is shorter than an index header');
    expect(indexFileProblem(file.subarray(0, file.length - 3), expected)).toMatch(/cut short|after its last/);
    expect(indexFileProblem(file, { ...expected, labels: labels(49) })).toBe(
      "it holds 50 elements, the manifest's snapshot 49",
    );
    expect(indexFileProblem(file, { ...expected, m: 8 })).toMatch(/M=16, the manifest says 8/);
    expect(indexFileProblem(file, { ...expected, efConstruction: 200 })).toBe(
      'it was built with efConstruction=100, the manifest says 200',
    );

    // A neighbour id past the end: hnswlib would read memory beyond its arrays.
    const crafted = Buffer.from(file);
    const firstLinks = 96 + 4;
    crafted.writeUInt32LE(1_000_000, firstLinks);
    expect(indexFileProblem(crafted, expected)).toBe('element 0: a link to an element it does not hold');

    const huge = Buffer.from(file);
    huge.writeBigUInt64LE(10n ** 12n, 8);
    expect(indexFileProblem(huge, expected)).toMatch(/capacity of 1000000000000 is not one we make/);

    // New elements' levels are drawn with it: a huge one makes hnswlib allocate link lists for them.
    const mult = Buffer.from(file);
    mult.writeDoubleLE(1e6, 80);
    expect(indexFileProblem(mult, expected)).toMatch(/level multiplier 1000000 is not the one hnswlib makes/);

    const dir = await mkdtemp(join(tmpdir(), 'hnsw-'));
    await writeFile(join(dir, 'bad.hnsw'), crafted);
    await expect(VectorIndex.load(join(dir, 'bad.hnsw'), [crafted], shape, 50, [])).rejects.toThrow(
      IndexFileRejected,
    );
  });

  it('checks a file read in chunks of any size as it checks it whole, without holding it', async () => {
    const index = VectorIndex.create(shape);
    for (let i = 0; i < 200; i++) index.add(i, unit(i));
    const file = await readFile(await written(index));
    const expected = { ...shape, labels: labels(200), deleted: new Set<number>() };
    const crafted = Buffer.from(file);
    // The last element's last vector value: a chunk boundary falls inside it for most sizes.
    const last = file.length;
    const upperStart = 96 + 200 * (2 * 16 * 4 + 4 + shape.dimensions * 4 + 8);
    crafted.writeFloatLE(Number.NaN, upperStart - 8 - 4);
    for (const size of [1, 7, 96, 1000, 4096, last]) {
      expect(checkInChunks(file, size, expected)).toBeUndefined();
      expect(checkInChunks(crafted, size, expected)).toBe(indexFileProblem(crafted, expected));
      expect(checkInChunks(file.subarray(0, last - 3), size, expected)).toMatch(/cut short|after its last/);
    }
    expect(indexFileProblem(crafted, expected)).toBe(
      'element 199 has a vector value of NaN, not one of a unit vector',
    );
  });

  it('accepts the deleted marks of forgotten memories only', async () => {
    const index = VectorIndex.create(shape);
    for (let i = 0; i < 20; i++) index.add(i, unit(i));
    index.remove(4);
    const file = await readFile(await written(index));
    const expected = { ...shape, labels: labels(20) };
    expect(indexFileProblem(file, { ...expected, deleted: new Set([4]) })).toBeUndefined();
    expect(indexFileProblem(file, { ...expected, deleted: new Set() })).toBe(
      'element 4 is marked deleted, but its memory was not forgotten',
    );
  });

  it('takes an empty index only as hnswlib writes one: no entry point, no top level', async () => {
    const file = await readFile(await written(VectorIndex.create(shape)));
    const expected = { ...shape, labels: [], deleted: new Set<number>() };
    expect(indexFileProblem(file, expected)).toBeUndefined();
    const crafted = Buffer.from(file);
    crafted.writeInt32LE(3, 48);
    crafted.writeUInt32LE(0, 52);
    expect(indexFileProblem(crafted, expected)).toBe('it holds no elements but has an entry point');
  });
});

function checkInChunks(file: Buffer, size: number, expected: ExpectedIndex): string | undefined {
  const check = new IndexFileCheck(expected);
  for (let at = 0; at < file.length; at += size) check.feed(Buffer.from(file.subarray(at, at + size)));
  return check.finish();
}

function labels(count: number): number[] {
  return Array.from({ length: count }, (_, label) => label);
}
