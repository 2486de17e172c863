/**
 * Saves the Python runtime's memory as the build's snapshot (src/sandbox/python/memory-snapshot.ts), so
 * that a Python sandbox starts in about 0.4 s instead of 3. Kept while Pyodide and the runners are
 * unchanged: the snapshot's name says which it was made for. Snapshots made for other code are removed.
 *
 * Run after tsc: `node scripts/python-snapshot.js` (`npm run build` does).
 */
import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { makeSnapshot, snapshotFolder, snapshotPath } from '../dist/src/sandbox/python/memory-snapshot.js';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const pyodideEntry = createRequire(join(root, 'package.json')).resolve('pyodide/pyodide.mjs');
const target = snapshotPath(root, dirname(pyodideEntry));
const folder = snapshotFolder(root);
mkdirSync(folder, { recursive: true });
for (const name of readdirSync(folder))
  if (name !== basename(target)) rmSync(join(folder, name), { force: true });

if (readdirSync(folder).includes(basename(target))) {
  console.log(`Python snapshot: ${relative(root, target)} is up to date`);
} else {
  const started = performance.now();
  try {
    const { loadPyodide } = await import(pathToFileURL(pyodideEntry).href);
    const snapshot = await makeSnapshot(loadPyodide);
    // Written whole or not at all: a child must never restore half a snapshot.
    writeFileSync(`${target}.partial`, snapshot);
    renameSync(`${target}.partial`, target);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const megabytes = (snapshot.byteLength / 2 ** 20).toFixed(0);
    console.log(`Python snapshot: ${relative(root, target)} (${megabytes} MiB, made in ${seconds} s)`);
  } catch (error) {
    // The snapshot only makes Python start sooner: an install must not fail for want of it.
    rmSync(`${target}.partial`, { force: true });
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    console.warn(
      `warning: no Python snapshot was made (${reason}); Python code nodes will take seconds to start`,
    );
  }
}
