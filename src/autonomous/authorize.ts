/**
 * Who lets a command run. Pure: given the command, the run and the permissions, the decision is to run
 * (and why), to ask the user, or to refuse when nobody can be asked. Deleting and running a program
 * (execute_shell) always need a person or an allow rule; `--yes`, `--continuous` and `y -N` do not
 * cover them.
 */
import type { Authorization } from '../events.js';
import type { Command, Effect } from '../../tools/command.js';
import { allows } from '../allow-patterns.js';
import type { RunState } from './run-state.js';

export interface Permissions {
  /** `--yes`: every command but deletion runs without asking. */
  yes: boolean;
  /** Commands allowed without asking (`--allow`, and the rules remembered for the workspace); `*` patterns. */
  allow: ReadonlySet<string>;
  /** Whether a user is there to ask (a terminal). */
  canAsk: boolean;
}

export type Decision =
  { kind: 'run'; by: Authorization } | { kind: 'ask'; reason: string } | { kind: 'refuse'; reason: string };

/** What the user may answer when asked (y, y -N, n, free text, or "always" for this workspace). */
export type Approval =
  | { kind: 'yes' }
  | { kind: 'yes-for'; steps: number }
  | { kind: 'always' }
  | { kind: 'no' }
  | { kind: 'feedback'; text: string };

/** Effects asked for every time unless an allow rule names the command, and what the question says. */
const ALWAYS_ASKED: Partial<Record<Effect, string>> = { delete: 'deletes', execute: 'runs a program' };

/** Decides whether `command` runs now. */
export function decide(command: Command, state: RunState, permissions: Permissions): Decision {
  if (command.effect === 'none') return { kind: 'run', by: 'no-effect' };
  if (allows(permissions.allow, command.name)) return { kind: 'run', by: 'allow-rule' };
  const ask = (reason: string): Decision =>
    permissions.canAsk
      ? { kind: 'ask', reason }
      : {
          kind: 'refuse',
          reason: `${reason}, and there is no terminal to ask in: pass --allow ${command.name}${ALWAYS_ASKED[command.effect] ? '' : ' or --yes'} to let it run`,
        };
  if (state.askAlways) return ask('a budget is almost used up, so every command is asked for');
  const always = ALWAYS_ASKED[command.effect];
  if (always) return ask(`${command.name} ${always}, which always needs your approval`);
  if (permissions.yes) return { kind: 'run', by: 'yes' };
  if (state.continuousLeft > 0) return { kind: 'run', by: 'continuous' };
  return ask(`${command.name} needs your approval`);
}

/**
 * Reads what a user typed at the approval prompt: `y`, `n`, `y -N` (N more commands without asking),
 * `a` (always allow this command in this workspace); anything else is feedback for the model.
 */
export function parseApproval(input: string): Approval {
  const text = input.trim();
  if (/^(y|yes)$/i.test(text)) return { kind: 'yes' };
  if (/^(n|no)$/i.test(text)) return { kind: 'no' };
  if (/^(a|always)$/i.test(text)) return { kind: 'always' };
  const many = /^y\s*-\s*(\d{1,6})$/i.exec(text);
  if (many) {
    const steps = Number(many[1]);
    return steps > 0 ? { kind: 'yes-for', steps } : { kind: 'yes' };
  }
  return { kind: 'feedback', text };
}
