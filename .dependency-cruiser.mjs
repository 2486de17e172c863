/**
 * The import rules of the shipped code, checked by `npm run lint:layers` (part of `npm run lint`): no
 * circles, not even type-only ones, and a module imports only its own layer and the layers below it
 * (DESIGN.md, "Layout"). A failure names the import and the rule it breaks.
 */

/** Modules every layer may import; they import nothing of ours but each other. */
const LEAVES = [
  'src/events.ts',
  'src/errors.ts',
  'src/interrupt.ts',
  'src/canonical-json.ts',
  'src/write-file.ts',
  'src/lazy-crypto.ts',
  'src/map-bounded.ts',
  'src/process-alive.ts',
  'src/package-root.ts',
  'src/allow-patterns.ts',
  'src/program-on-path.ts',
];

/**
 * The layers, bottom to top; a folder may import its own layer and the ones below. `onlyLeaves` keeps a
 * folder to the leaf modules (and itself) whatever its layer.
 */
const LAYERS = [
  [
    { folder: 'src/graph/', onlyLeaves: true },
    { folder: 'src/postgres/' },
    { folder: 'src/llm/' },
    { folder: 'src/sandbox/' },
    { folder: 'src/mcp/' },
    { folder: 'memory/' },
  ],
  [{ folder: 'src/aipl/' }],
  [{ folder: 'src/engine/' }],
  [{ folder: 'tools/' }],
  [{ folder: 'src/autonomous/' }, { folder: 'src/flow/' }],
  [{ folder: 'src/export/' }],
  [{ folder: 'meta/' }],
  [{ folder: 'src/store/' }],
  [{ folder: 'src/durable/' }],
  [{ folder: 'src/agent/' }],
  [{ folder: 'src/serve/' }],
  [{ folder: 'src/tui/' }],
  [{ folder: 'src/cli/' }],
  [{ folder: 'bin/' }],
];

const OURS = '^(src|meta|tools|memory|bin)/';

/** A regular expression matching these paths, and every path below those that are folders. */
function anyOf(paths) {
  return `^(${paths.map((path) => path.replaceAll('.', '\\.')).join('|')})`;
}

function layerRules() {
  const below = [...LEAVES];
  const rules = [];
  for (const layer of LAYERS) {
    const own = layer.map(({ folder }) => folder);
    for (const { folder, onlyLeaves } of layer) {
      const allowed = onlyLeaves ? [...LEAVES, folder] : [...below, ...own];
      rules.push({
        name: `layer:${folder}`,
        comment: onlyLeaves
          ? `${folder} may import only itself and the leaf modules.`
          : `${folder} may import only its own layer (${own.join(', ')}) and the layers below it (the order is LAYERS in .dependency-cruiser.mjs).`,
        severity: 'error',
        from: { path: anyOf([folder]) },
        to: { path: OURS, pathNot: anyOf(allowed) },
      });
    }
    below.push(...own);
  }
  return rules;
}

export default {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Modules depend downward only: no circles, not even type-only ones.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'leaf-imports-ours',
      comment:
        'The leaf modules import nothing of ours but other leaves, so that every layer may import them.',
      severity: 'error',
      from: { path: `${anyOf(LEAVES)}$` },
      to: { path: OURS, pathNot: `${anyOf(LEAVES)}$` },
    },
    {
      name: 'layer:unplaced',
      comment: 'A module outside every layer: give its folder a layer in LAYERS (and in DESIGN.md).',
      severity: 'error',
      from: {
        path: OURS,
        pathNot: `${anyOf([...LEAVES.map((leaf) => `${leaf}$`), ...LAYERS.flat().map(({ folder }) => folder)])}`,
      },
      to: {},
    },
    ...layerRules(),
  ],
  options: {
    includeOnly: OURS,
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
