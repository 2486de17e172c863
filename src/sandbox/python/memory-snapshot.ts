/**
 * The Python runtime as the child starts it: Pyodide loaded with the runners defined. Loading CPython
 * from scratch takes about 3 s of WebAssembly start-up; the build saves the finished runtime's memory as
 * a Pyodide memory snapshot (scripts/python-snapshot.js), and a child restores it in about 0.4 s.
 *
 * The snapshot is a build output like the compiled code beside it, as trusted and in the same place. Its
 * name carries a hash of Pyodide's version and the runners' source, so a build never restores a
 * snapshot made for other code; Pyodide itself refuses one of another build. A child that finds none, or
 * one Pyodide refuses, loads from scratch.
 *
 * Like child.ts, this file may import only Node's builtins and Pyodide: it runs in the contained child.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { loadPyodide as LoadPyodide, PyodideAPI } from 'pyodide';
import { PROGRAM_RUNNER_SOURCE } from './program-runner-source.js';
import { RUNNER_SOURCE } from './runner-source.js';

/**
 * How the runtime loaded: `restored` from the build's snapshot; `refused`: there was one, but Pyodide
 * would not restore it; `absent`: there was none.
 */
export type SnapshotUse = 'restored' | 'refused' | 'absent';

export interface LoadedRuntime {
  pyodide: PyodideAPI;
  snapshot: SnapshotUse;
}

/** The runtime, from `snapshot` where Pyodide accepts it, else loaded from scratch. */
export async function loadRuntime(
  loadPyodide: typeof LoadPyodide,
  snapshot: Uint8Array | undefined,
): Promise<LoadedRuntime> {
  if (snapshot) {
    try {
      const pyodide = await loadPyodide({ jsglobals: emptyGlobals(), _loadSnapshot: snapshot });
      // `random` was seeded when the snapshot was made: without a new seed, every runtime would draw the
      // same numbers.
      pyodide.runPython('import random as _random\n_random.seed()\ndel _random');
      return { pyodide, snapshot: 'restored' };
    } catch {
      // Made by another Pyodide build, or damaged: the runtime loads as if there were none.
    }
  }
  const pyodide = await loadPyodide({ jsglobals: emptyGlobals() });
  defineRunners(pyodide);
  return { pyodide, snapshot: snapshot ? 'refused' : 'absent' };
}

/** A snapshot of the runtime as `loadRuntime` makes it from scratch. */
export async function makeSnapshot(loadPyodide: typeof LoadPyodide): Promise<Uint8Array> {
  const pyodide = await loadPyodide({ jsglobals: emptyGlobals(), _makeSnapshot: true });
  defineRunners(pyodide);
  return pyodide.makeMemorySnapshot();
}

/** Where the build keeps the snapshot for the Pyodide package in `pyodideDir`. */
export function snapshotPath(packageRoot: string, pyodideDir: string): string {
  const { version } = JSON.parse(readFileSync(join(pyodideDir, 'package.json'), 'utf8')) as {
    version: string;
  };
  const hash = createHash('sha256')
    .update(`${version}\0${RUNNER_SOURCE}\0${PROGRAM_RUNNER_SOURCE}`)
    .digest('hex')
    .slice(0, 16);
  return join(snapshotFolder(packageRoot), `runtime-${hash}.snapshot`);
}

/** The folder of the build's snapshots. */
export function snapshotFolder(packageRoot: string): string {
  return join(packageRoot, 'dist', 'python');
}

/** What `import js` gives Python: an empty object, not the child's global one. */
function emptyGlobals(): object {
  return Object.create(null) as object;
}

function defineRunners(pyodide: PyodideAPI): void {
  pyodide.runPython(RUNNER_SOURCE);
  pyodide.runPython(PROGRAM_RUNNER_SOURCE);
}
