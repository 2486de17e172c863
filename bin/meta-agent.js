#!/usr/bin/env -S node --no-node-snapshot
// Checked before any import of ours: on an older Node the ESM graph would fail with an obscure error.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  process.stderr.write(
    `meta-agent needs Node.js >= 22.12 (this is ${process.version}). Install a newer Node and try again.\n`,
  );
  process.exit(2);
}
const { main } = await import('../dist/src/cli/main.js');
process.exitCode = await main(process.argv);
