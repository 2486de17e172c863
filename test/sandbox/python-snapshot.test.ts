/**
 * The build's memory snapshot of the Python runtime (memory-snapshot.ts): a runtime restores it rather
 * than loading CPython from scratch, draws its own random numbers, and still starts, from scratch,
 * where the snapshot is missing or damaged. Real runtimes from the build in dist/ (`npm test` makes
 * the snapshot before the tests run).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PythonSandbox } from '../../src/sandbox/index.js';
import { snapshotPath } from '../../src/sandbox/python/memory-snapshot.js';
import { PythonRuntime } from '../../src/sandbox/python/python-runtime.js';
import { where } from './helpers.js';

const LOAD_MS = 120_000;
const root = join(import.meta.dirname, '..', '..');
const built = snapshotPath(root, dirname(createRequire(import.meta.url).resolve('pyodide/pyodide.mjs')));

/** The number a fresh runtime started with `options` draws first, and how it used the snapshot. */
async function firstDraw(options: ConstructorParameters<typeof PythonRuntime>[0] = {}) {
  const runtime = new PythonRuntime(options);
  const python = PythonSandbox.create({}, runtime);
  try {
    const drawn = await python.evaluate("__import__('random').random()", {}, where);
    return { drawn, snapshot: runtime.snapshot };
  } finally {
    python.dispose();
    runtime.stop();
  }
}

describe('the Python runtime snapshot', () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'python-snapshot-'));
  });
  afterAll(() => rm(folder, { recursive: true, force: true }));

  it('is made by the build, and a runtime restores it', { timeout: LOAD_MS }, async () => {
    expect(existsSync(built), `${built} should have been made by the build`).toBe(true);
    const { snapshot } = await firstDraw();
    expect(snapshot).toBe('restored');
  });

  it('gives each runtime restored from it random numbers of its own', { timeout: LOAD_MS }, async () => {
    const [first, second] = await Promise.all([firstDraw(), firstDraw()]);
    expect([first.snapshot, second.snapshot]).toEqual(['restored', 'restored']);
    expect(first.drawn).not.toBe(second.drawn);
  });

  it('loads Python from scratch where there is no snapshot', { timeout: LOAD_MS }, async () => {
    expect(await firstDraw({ snapshot: null })).toMatchObject({ snapshot: 'absent' });
    expect(await firstDraw({ snapshot: join(folder, 'missing.snapshot') })).toMatchObject({
      snapshot: 'absent',
    });
  });

  it('loads Python from scratch when Pyodide refuses a damaged snapshot', { timeout: LOAD_MS }, async () => {
    const damaged = join(folder, 'damaged.snapshot');
    const bytes = readFileSync(built);
    bytes.fill(0, 16, 48);
    writeFileSync(damaged, bytes);
    const { drawn, snapshot } = await firstDraw({ snapshot: damaged });
    expect(snapshot).toBe('refused');
    expect(typeof drawn).toBe('number');
  });
});
