/**
 * `execute_shell` as AutoGPT 0.2.x names it: a non-interactive command line run by /bin/sh in the
 * workspace, answered with its exit status, its output and its errors. Offered only when the user
 * turned it on for the run (`--allow-shell`), contained as shell-sandbox.ts says, and asked for every
 * time unless an allow rule names it (authorize.ts: its effect is `execute`).
 */
import { z } from 'zod';
import { defineCommand, type ShellLimits, type ShellOutcome } from './command.js';

export const executeShell = defineCommand({
  name: 'execute_shell',
  title: 'Execute Shell Command, non-interactive commands only',
  description:
    'Runs a command line with /bin/sh in the workspace folder, with no input, and returns its exit ' +
    'status, output and errors (the beginning and end of each when long). No network, no files ' +
    'outside the workspace, a scrubbed environment; stopped past its time limit.',
  args: z.object({ command_line: z.string().min(1).describe('command_line') }),
  effect: 'execute',
  needs: ['shell'],
  async run({ command_line }, { shell, signal }) {
    const outcome = await shell.run(command_line, signal);
    return shellOutput(outcome, shell.limits);
  },
});

/** AutoGPT's `STDOUT:\n…\nSTDERR:\n…`, after how the command ended. */
function shellOutput(outcome: ShellOutcome, limits: ShellLimits): string {
  const ended = outcome.timedOut
    ? `The command ran longer than ${limits.timeoutMs / 1000} s and was stopped.`
    : outcome.exitCode === null
      ? 'The command was ended by a signal.'
      : `Exit status ${outcome.exitCode}.`;
  return `${ended}\nSTDOUT:\n${outcome.stdout}\nSTDERR:\n${outcome.stderr}`;
}
