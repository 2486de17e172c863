/**
 * A namespace's hnswlib index file comes from a folder that may not be ours. hnswlib trusts every byte
 * of it: an entry point without the upper levels the header claims, a link from an upper level to an
 * element that has none, are read as memory that is not there (SIGSEGV), and NaN vectors, repeated or
 * huge labels give answers that name no memory. Each case below rewrites the bytes of a real index and
 * then the manifest's size and digest to match, so only the file's own checks stand between it and
 * hnswlib; opening and searching it runs in a child process, where a crash is an exit signal.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { MANIFEST_FILE, manifestSchema } from '../../memory/manifest.js';
import { MemoryStore } from '../../memory/store.js';
import { wordEmbedder } from '../support/embedders.js';
import { TS_CHILD_ARGS } from '../support/ts-child.js';

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const nodeArgs = [...TS_CHILD_ARGS, here('../memory/store-child.ts')];

const COUNT = 300;
const text = (i: number) => `memory ${i} token${i}x about subject ${i % 7}`;

interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** `store-child.ts FOLDER search QUERY`, ended after 20 s if it hangs. */
function search(folder: string, query: string): Promise<Result> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [...nodeArgs, folder, 'search', query],
      { timeout: 20_000, killSignal: 'SIGKILL' },
      (_error, stdout, stderr) => resolve({ code: child.exitCode, signal: child.signalCode, stdout, stderr }),
    );
  });
}

/** hnswlib's layout of the file (HierarchicalNSW::saveIndex), as far as the cases need it. */
interface Layout {
  count: number;
  bytesPerElement: number;
  labelOffset: number;
  dataOffset: number;
  dimensions: number;
  maxLevel: number;
  entryPoint: number;
  /** Bytes of one upper-level link list: a length, then maxM ids. */
  upperList: number;
  levels: number[];
  /** Where each element's upper-level link lists start. */
  upperAt: number[];
}

const HEADER = 96;

function layout(file: Buffer): Layout {
  const size = (at: number) => Number(file.readBigUInt64LE(at));
  const count = size(16);
  const bytesPerElement = size(24);
  const labelOffset = size(32);
  const dataOffset = size(40);
  const upperList = size(56) * 4 + 4;
  const levels: number[] = [];
  const upperAt: number[] = [];
  let at = HEADER + count * bytesPerElement;
  for (let element = 0; element < count; element++) {
    const bytes = file.readUInt32LE(at);
    upperAt.push(at + 4);
    levels.push(bytes / upperList);
    at += 4 + bytes;
  }
  return {
    count,
    bytesPerElement,
    labelOffset,
    dataOffset,
    dimensions: (labelOffset - dataOffset) / 4,
    maxLevel: file.readInt32LE(48),
    entryPoint: file.readUInt32LE(52),
    upperList,
    levels,
    upperAt,
  };
}

const elementAt = (shape: Layout, element: number) => HEADER + element * shape.bytesPerElement;

/** A copy of the namespace whose index file `craft` rewrote, with the manifest describing the new bytes. */
async function crafted(source: string, craft: (file: Buffer, shape: Layout) => void): Promise<string> {
  const folder = join(await mkdtemp(join(tmpdir(), 'memory-index-')), 'ns');
  await cp(source, folder, { recursive: true });
  const manifestPath = join(folder, MANIFEST_FILE);
  const manifest = manifestSchema.parse(JSON.parse(await readFile(manifestPath, 'utf8')));
  const vectors = manifest.snapshot!.vectors!;
  const file = await readFile(join(folder, vectors.file));
  craft(file, layout(file));
  await writeFile(join(folder, vectors.file), file);
  vectors.bytes = file.length;
  vectors.sha256 = createHash('sha256').update(file).digest('hex');
  await writeFile(manifestPath, JSON.stringify(manifest));
  return folder;
}

/** An element of level 0 that is not the entry point: the case's target. */
function groundElement(shape: Layout): number {
  return shape.levels.findIndex((level, element) => level === 0 && element !== shape.entryPoint);
}

let source: string;
let original: Buffer;
let manifestVectors: string;
/** The first hit for text(9) in the namespace as the store made it. */
let baselineFirst: string;

beforeAll(async () => {
  source = join(await mkdtemp(join(tmpdir(), 'memory-index-')), 'ns');
  const store = await MemoryStore.open({ folder: source, embedder: wordEmbedder() });
  await store.addMany(Array.from({ length: COUNT }, (_, i) => ({ text: text(i) })));
  await store.close();
  const manifest = manifestSchema.parse(JSON.parse(await readFile(join(source, MANIFEST_FILE), 'utf8')));
  manifestVectors = manifest.snapshot!.vectors!.file;
  original = await readFile(join(source, manifestVectors));
  baselineFirst = (await store.search(text(9), 5))[0]!.id;
});

describe('a crafted hnswlib index file in a memory folder', () => {
  it('is one the cases can craft: several levels, labels numbering the memories, whole answers', async () => {
    const shape = layout(original);
    expect(shape.count).toBe(COUNT);
    expect(shape.maxLevel).toBeGreaterThanOrEqual(1);
    expect(shape.levels[shape.entryPoint]).toBe(shape.maxLevel);
    expect(groundElement(shape)).toBeGreaterThanOrEqual(0);
    const untouched = await crafted(source, () => undefined);
    const result = await search(untouched, text(5));
    expect(result).toMatchObject({ code: 0, signal: null, stderr: '' });
    expect(JSON.parse(result.stdout)).toHaveLength(5);
  });

  const cases: Array<{ name: string; problem: RegExp; craft: (file: Buffer, shape: Layout) => void }> = [
    {
      name: 'its entry point moved to an element that has only level 0',
      problem: /entry point/,
      craft: (file, shape) => file.writeUInt32LE(groundElement(shape), 52),
    },
    {
      name: 'its top level raised past what its elements have',
      problem: /level/,
      craft: (file, shape) => file.writeInt32LE(shape.maxLevel + 30, 48),
    },
    {
      name: 'upper-level links to an element that has only level 0',
      problem: /level/,
      craft: (file, shape) => {
        // Every link of the entry point's top level leads to the element the query is: hnswlib moves there.
        const at = shape.upperAt[shape.entryPoint]! + (shape.maxLevel - 1) * shape.upperList;
        file.writeUInt16LE(Math.max(1, file.readUInt16LE(at)), at);
        for (let i = 0; i < file.readUInt16LE(at); i++)
          file.writeUInt32LE(groundElement(shape), at + 4 + i * 4);
      },
    },
    {
      name: 'vectors of NaN',
      problem: /vector/,
      craft: (file, shape) => {
        for (let element = 0; element < shape.count; element += 3)
          for (let d = 0; d < shape.dimensions; d++)
            file.writeFloatLE(Number.NaN, elementAt(shape, element) + shape.dataOffset + d * 4);
      },
    },
    {
      name: 'vectors of infinities',
      problem: /vector/,
      craft: (file, shape) =>
        file.writeFloatLE(
          Number.POSITIVE_INFINITY,
          elementAt(shape, groundElement(shape)) + shape.dataOffset,
        ),
    },
    {
      name: 'two elements with one label',
      problem: /label/,
      craft: (file, shape) => file.writeBigUInt64LE(4n, elementAt(shape, 5) + shape.labelOffset),
    },
    {
      name: 'a label past 32 bits',
      problem: /label/,
      craft: (file, shape) => file.writeBigUInt64LE(2n ** 40n + 5n, elementAt(shape, 5) + shape.labelOffset),
    },
    {
      name: 'a label that is no memory of the snapshot',
      problem: /label/,
      craft: (file, shape) =>
        file.writeBigUInt64LE(BigInt(COUNT + 7), elementAt(shape, 5) + shape.labelOffset),
    },
    {
      name: 'a level multiplier hnswlib never writes',
      problem: /level multiplier/,
      craft: (file) => file.writeDoubleLE(1e300, 80),
    },
  ];

  it.each(cases)(
    'with $name: rebuilt from the log, never a crash, every memory still found by its words',
    async ({ craft, problem }) => {
      const folder = await crafted(source, craft);
      const result = await search(folder, text(groundElement(layout(original))));
      expect(result.signal, result.stderr).toBeNull();
      expect(result.code, result.stderr).toBe(0);
      const notes = result.stderr.trim().split('\n');
      expect(notes).toHaveLength(1);
      // The index file held the only copy of the snapshot's vectors (the log holds them no more).
      expect(notes[0]).toMatch(
        /^note: memory in .*: the saved index was not used \(.*\); rebuilt from the log, without the vectors only it held: those memories are found by words alone until `meta-agent memory reindex`$/,
      );
      expect(notes[0]!.match(/not used \((.*)\); rebuilt/)![1]).toMatch(problem);
      // Its words still find the memory first, as the file hnswlib wrote did.
      const [first] = JSON.parse((await search(folder, text(9))).stdout) as string[];
      expect(first).toBe(baselineFirst);
    },
    60_000,
  );
});
