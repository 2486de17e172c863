import type { Reporter, TestModule } from 'vitest/node';

/**
 * Prints each skipped test by its full name, which says why it was skipped (a test that may skip
 * carries its reason in its title), then `N passed, N failed, N skipped` as the very last line of a
 * run, the plain closing line CI reads (vitest's own summary is not one it recognises).
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = unhandledErrors.length;
    const skipped: string[] = [];
    for (const testModule of testModules) {
      for (const test of testModule.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped.push(test.fullName);
      }
      // A module that fails to load has no tests but must still fail the run.
      if (testModule.state() === 'failed' && !testModule.children.size) failed++;
    }
    const list = skipped.map((name) => `skipped: ${name}\n`).join('');
    process.stdout.write(`\n${list}${passed} passed, ${failed} failed, ${skipped.length} skipped\n`);
  }
}
