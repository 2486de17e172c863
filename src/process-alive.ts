/** Whether a process still runs, for files named after the process that made them (temp files, locks). */

/** True while the process `pid` runs, whoever's it is. */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
