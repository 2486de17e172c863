/**
 * isolated-vm, loaded when the first evaluation needs it (a run without code never loads it), and only in
 * a process started without Node's startup snapshot: V8 can crash when isolates made from different
 * snapshots share a process, so isolated-vm asks for `node --no-node-snapshot`. Refusing here turns that
 * possible crash into an error saying what to do.
 */
import { createRequire } from 'node:module';
import type ivm from 'isolated-vm';

let loaded: typeof ivm | undefined;

/** True when this process was started with --no-node-snapshot, on the command line or in NODE_OPTIONS. */
export function startedWithoutNodeSnapshot(): boolean {
  const options = process.env.NODE_OPTIONS?.split(/\s+/) ?? [];
  return [...process.execArgv, ...options].includes('--no-node-snapshot');
}

/** The isolated-vm module. @throws Error in a process started from Node's snapshot. */
export function isolatedVm(): typeof ivm {
  if (!loaded) {
    if (!startedWithoutNodeSnapshot())
      throw new Error(
        "the sandbox needs a Node process started with --no-node-snapshot (isolated-vm cannot run beside Node's startup snapshot)",
      );
    loaded = createRequire(import.meta.url)('isolated-vm') as typeof ivm;
  }
  return loaded;
}
