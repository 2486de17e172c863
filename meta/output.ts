/**
 * What a design run writes: the graph file with its DOT, SVG and HTML views beside it, or, when the run
 * fails, the partial work (outline, DOT draft, the model's last answer) so the user can see how far the
 * model got and why it stopped.
 */
import { lstat, mkdir, rm } from 'node:fs/promises';
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
  // An earlier failed design of this name left its partial work here; beside a finished design it
  // would only mislead.
  await removePartialWork(dir, file.name);
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

/** Where the partial work of a design named `name` goes in `dir`: `NAME.partial.*`. */
function partialPaths(dir: string, name: string): Record<keyof PartialWork, string> {
  const base = join(dir, `${name}.partial`);
  return {
    outline: `${base}.outline.md`,
    dot: `${base}.dot`,
    lastAnswer: `${base}.last-answer.txt`,
    record: `${base}.json`,
  };
}

/**
 * Writes the partial work of a failed design into `dir` as `NAME.partial.*`, removing the pieces an
 * earlier run left that this one did not get to; returns the paths written.
 */
export async function savePartialWork(dir: string, name: string, work: PartialWork): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const paths = partialPaths(dir, name);
  const files: [string, string | undefined][] = [
    [paths.outline, work.outline],
    [paths.dot, work.dot],
    [paths.lastAnswer, work.lastAnswer],
    [paths.record, `${JSON.stringify(work.record, null, 2)}\n`],
  ];
  await Promise.all(
    files.map(([path, text]) =>
      text === undefined ? rm(path, { force: true }) : writeFileAtomic(path, text),
    ),
  );
  return files.filter(([, text]) => text !== undefined).map(([path]) => path);
}

/** Removes every piece of partial work of a design named `name` from `dir`. */
async function removePartialWork(dir: string, name: string): Promise<void> {
  await Promise.all(Object.values(partialPaths(dir, name)).map((path) => rm(path, { force: true })));
}
