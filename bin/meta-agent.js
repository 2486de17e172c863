#!/usr/bin/env node
// Checked before any import of ours: on an older Node the ESM graph would fail with an obscure error.
// Node 24 because isolated-vm 7, which runs code nodes, ships for Node 24 and later only.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(
    `meta-agent needs Node.js >= 24 (this is ${process.version}). Install Node 24 and try again.\n`,
  );
  process.exit(2);
}
// React (behind the terminal UI) runs its slower development build unless told otherwise.
process.env.NODE_ENV ??= 'production';
// The .env of the current folder, before anything reads a setting (src/cli/env-file.ts).
const { applyEnvFile } = await import('../dist/cli/env-file.js');
for (const warning of applyEnvFile()) process.stderr.write(`warning: ${warning}\n`);
// No --no-node-snapshot here, though isolated-vm needs it: it slows the start of every command by some
// 35 ms, so a command restarts itself with it only when it is about to run code (src/cli/sandbox-process.ts).
const { restartEarly } = await import('../dist/cli/sandbox-process.js');
await restartEarly(process.argv);
const { main } = await import('../dist/cli/main.js');
process.exitCode = await main(process.argv);
// An interrupted run ends now: model calls still in flight must not hold the process open.
if (process.exitCode === 130) process.exit();
