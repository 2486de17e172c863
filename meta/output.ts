/**
 * What a design run writes: the graph file with its DOT, SVG and HTML views beside it, or, when the run
 * fails, the partial work (outline, DOT draft, the model's last answer) so the user can see how far the
 * model got and why it stopped.
 */
import { lstat, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { toDot } from '../src/export/dot.js';
import { toSvgAndHtml } from '../src/export/html.js';
import { saveGraphFile, writeFileAtomic } from '../src/graph/load.js';
import type { GraphFile } from '../src/graph/schema.js';

/** Paths of a designed graph's files. */
export interface SavedGraph {
  graph: string;
  dot: string;
  svg: string;
  html: string;
}

/** Where a design named `name` is saved in `dir`. */
export function designPaths(dir: string, name: string): SavedGraph {
  const base = join(dir, name);
  return {
    graph: `${base}.autogram.json`,
    dot: `${base}.dot`,
    svg: `${base}.svg`,
    html: `${base}.html`,
  };
}

/** Those of a design's files (graph and views, not partial work) that something already occupies. */
export async function designFilesPresent(dir: string, name: string): Promise<string[]> {
  const paths = Object.values(designPaths(dir, name));
  const present = await Promise.all(
    paths.map((path) =>
      lstat(path).then(
        () => true,
        () => false,
      ),
    ),
  );
  return paths.filter((_, i) => present[i]);
}

/** `name`, or the first of `name_2`, `name_3`, … whose files are all free in `dir`. */
export async function freeDesignName(dir: string, name: string): Promise<string> {
  let candidate = name;
  for (let n = 2; (await designFilesPresent(dir, candidate)).length > 0; n++) candidate = `${name}_${n}`;
  return candidate;
}

/** Writes `NAME.autogram.json` and its `.dot`, `.svg` and `.html` views into `dir`. */
export async function saveDesignedGraph(dir: string, file: GraphFile): Promise<SavedGraph> {
  await mkdir(dir, { recursive: true });
  const paths = designPaths(dir, file.name);
  await saveGraphFile(paths.graph, file);
  const { svg, html } = await toSvgAndHtml(file);
  await Promise.all([
    writeFileAtomic(paths.dot, toDot(file)),
    writeFileAtomic(paths.svg, svg),
    writeFileAtomic(paths.html, html),
  ]);
  return paths;
}

/** The work of a failed run, each piece present once the run got that far. */
export interface PartialWork {
  outline?: string | undefined;
  /** The model's last DOT draft, as it wrote it. */
  dot?: string | undefined;
  /** The last model answer that could not be used. */
  lastAnswer?: string | undefined;
  /** The designer's work record, whole, for inspection. */
  record: object;
}

/** Writes the partial work of a failed design into `dir` as `NAME.partial.*`; returns the paths written. */
export async function savePartialWork(dir: string, name: string, work: PartialWork): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const base = join(dir, `${name}.partial`);
  const files: [string, string | undefined][] = [
    [`${base}.outline.md`, work.outline],
    [`${base}.dot`, work.dot],
    [`${base}.last-answer.txt`, work.lastAnswer],
    [`${base}.json`, `${JSON.stringify(work.record, null, 2)}\n`],
  ];
  const written = files.filter((entry): entry is [string, string] => entry[1] !== undefined);
  await Promise.all(written.map(([path, text]) => writeFileAtomic(path, text)));
  return written.map(([path]) => path);
}
