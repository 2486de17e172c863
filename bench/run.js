/**
 * Runs the compiled benchmarks (dist/bench/*.bench.js) one after another in this process and prints
 * their tables. Each bench module exports a `run…Bench()` function that prints its own table and
 * returns its figures. A bench that throws is reported and the others still run; the exit code is then 1.
 *
 * Usage: `npm run bench` (builds first), or after `npx tsc -p .`:
 *   node --no-node-snapshot bench/run.js [NAME…]     e.g. `bench/run.js engine sandbox`
 *
 * Plain JavaScript so that it runs without a build of its own; what it runs is the build.
 */
import { existsSync, readdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';

// What users run: bin/meta-agent.js sets the same default before React loads.
process.env.NODE_ENV ??= 'production';

const dir = fileURLToPath(new URL('../dist/bench/', import.meta.url));
const SUFFIX = '.bench.js';

if (!existsSync(dir)) {
  console.error(`no compiled benchmarks in ${dir}: run \`npx tsc -p .\` (or \`npm run bench\`) first`);
  process.exit(1);
}

const available = readdirSync(dir)
  .filter((file) => file.endsWith(SUFFIX))
  .map((file) => file.slice(0, -SUFFIX.length))
  .sort();
const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !available.includes(name));
if (unknown.length > 0) {
  console.error(`no benchmark named ${unknown.join(', ')}; compiled ones: ${available.join(', ')}`);
  process.exit(1);
}
const names = wanted.length > 0 ? wanted : available;

/** Name -> 'ok' or the error's first line, for the summary at the end. */
const outcomes = new Map();
for (const name of names) {
  console.log(`\n== ${name} ==`);
  const started = performance.now();
  try {
    const module = await import(pathToFileURL(`${dir}${name}${SUFFIX}`).href);
    const runners = Object.entries(module).filter(
      ([key, value]) => /^run\w*Bench$/.test(key) && typeof value === 'function',
    );
    if (runners.length === 0) throw new Error(`${name}${SUFFIX} exports no run…Bench() function`);
    for (const [, run] of runners) await run();
    outcomes.set(name, `ok, ${((performance.now() - started) / 1000).toFixed(1)} s`);
  } catch (error) {
    console.error(`${name} failed:`, error);
    outcomes.set(name, `FAILED: ${String(error instanceof Error ? error.message : error).split('\n')[0]}`);
  }
}

console.log('\n== summary ==');
for (const [name, outcome] of outcomes) console.log(`${name.padEnd(10)} ${outcome}`);
if ([...outcomes.values()].some((outcome) => outcome.startsWith('FAILED'))) process.exitCode = 1;
