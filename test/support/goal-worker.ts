/**
 * A process that carries goal runs from the `goals` queue, as `meta-agent worker` does, for tests that
 * kill one: `node …TS_CHILD_ARGS goal-worker.ts URL`. It says `ready` on stdout once it takes work.
 */
import { hostGoalRuns } from '../../src/cli/goal-run-workflow.js';
import { CLAIMANT, openStore } from '../../src/cli/store-for.js';
import { version } from '../../src/cli/version.js';
import { launchDurable } from '../../src/durable/runtime.js';

const url = process.argv[2]!;
const opened = await openStore(url);
hostGoalRuns({ store: opened.store, onProblem: (message) => process.stderr.write(`${message}\n`) });
const durable = await launchDurable({
  db: opened.db!,
  url,
  role: 'worker',
  version: version(),
  executorId: CLAIMANT,
  onProblem: (message) => process.stderr.write(`${message}\n`),
});
process.stdout.write('ready\n');
process.once('SIGTERM', () => {
  void durable.shutdown().finally(() => opened.close().finally(() => process.exit(0)));
});
