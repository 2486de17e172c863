/**
 * `--allow-shell`, `--allow-unsandboxed-shell` and `--shell-timeout` as a run gets them: execute_shell
 * contained by bubblewrap where it works on this machine; where it does not, refused, unless the user
 * chose to run commands unconfined, which is then said on every start.
 */
import type { ShellGrant } from '../autonomous/resources.js';
import { UserError } from '../errors.js';
import { findBubblewrap } from '../../tools/shell-sandbox.js';
import { writeErr } from './terminal.js';

export interface ShellOptions {
  allow?: string[];
  allowShell?: boolean;
  allowUnsandboxedShell?: boolean;
  /** Seconds. */
  shellTimeout?: number;
}

/** execute_shell's grant for the run, or undefined when the user did not turn it on. */
export function shellGrant(options: ShellOptions): ShellGrant | undefined {
  if (!options.allowShell && !options.allowUnsandboxedShell) {
    if (options.allow?.includes('execute_shell'))
      throw new UserError(
        '--allow execute_shell: the run offers execute_shell only with --allow-shell',
        2,
        'add --allow-shell to turn it on for this run',
      );
    return undefined;
  }
  const timeout = options.shellTimeout === undefined ? {} : { timeoutMs: options.shellTimeout * 1000 };
  const found = findBubblewrap();
  if ('program' in found) return { containment: { kind: 'bubblewrap', program: found.program }, ...timeout };
  if (!options.allowUnsandboxedShell)
    throw new UserError(
      `--allow-shell: ${found.problem}, so execute_shell's commands cannot be contained`,
      2,
      'install bubblewrap (Debian, Ubuntu: apt-get install bubblewrap) where user namespaces are allowed, ' +
        'or pass --allow-unsandboxed-shell to run them unconfined (they can then read your files and reach the network)',
    );
  writeErr(
    `[shell] ${found.problem}: execute_shell runs its commands unconfined (--allow-unsandboxed-shell); ` +
      'they can read what you can and reach the network\n',
  );
  return { containment: { kind: 'unconfined' }, ...timeout };
}
