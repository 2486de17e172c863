/** One line of `meta-agent doctor`'s report. */

/**
 * `ok`: works; `warn`: works, but something looks wrong (the exit status stays 0); `fail`: does not
 * work (exit 1); `skip`: not tried, because something it needs failed.
 */
export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

/** What one check found, and what to do when it is not ok. */
export interface Check {
  status: CheckStatus;
  /** What was checked: `node`, `endpoint`, `classify`, a role, … */
  name: string;
  detail: string;
  fix?: string;
}

/** Where a check's line goes as soon as it is known, so a slow check never hides the ones before it. */
export type Report = (check: Check) => void;

/** The check as one aligned line: `fail  endpoint    what happened — fix: what to do`. */
export function formatCheck(check: Check): string {
  const fix = check.fix ? ` — fix: ${check.fix}` : '';
  return `${check.status.padEnd(4)}  ${check.name.padEnd(10)}  ${check.detail}${fix}\n`;
}
