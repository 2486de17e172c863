/**
 * How a test starts a second Node process that runs the project's TypeScript as it is: a writer killed
 * mid-write, readers beside writers, a computation kept out of the test runner's process.
 */
import { fileURLToPath } from 'node:url';

/**
 * `node` arguments before the script: isolated-vm refuses Node's startup snapshot, parameter properties
 * (src/llm) need more than type stripping, and the loader resolves the sources' `.js` imports.
 */
export const TS_CHILD_ARGS: readonly string[] = [
  '--no-node-snapshot',
  '--experimental-transform-types',
  '--no-warnings',
  '--import',
  fileURLToPath(new URL('../engine/ts-register.mjs', import.meta.url)),
];
