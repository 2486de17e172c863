/**
 * The questions a run asks in a terminal when no --goal was given, as seed 004 shows AutoGPT asking
 * them: whether to go on with the workspace's last settings, else a name, a role, and up to five goals
 * (an empty answer ends the list; none at all keeps a default).
 */
import { createInterface } from 'node:readline/promises';
import type { AgentSettings } from '../autonomous/ai-settings.js';
import { UserError } from '../errors.js';
import { terminalSafe } from '../tui/terminal-safe.js';

export type GoalSetup = AgentSettings;

const DEFAULTS: GoalSetup = {
  name: 'Writer',
  role: 'an AI that writes short, clear texts into files in its workspace',
  goals: ['Write a haiku about the first hour with a new tool to haiku.txt', 'Shut down when you are done'],
};

type Ask = (question: string) => Promise<string>;

/**
 * Runs `questions` on a readline over the terminal; Ctrl+C or the end of input while asking cancels
 * (exit 130).
 */
async function withQuestions<T>(questions: (ask: Ask) => Promise<T>): Promise<T> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  const cancelled = new Promise<never>((_, reject) =>
    rl.once('close', () => reject(new UserError('cancelled before the run started', 130))),
  );
  try {
    return await questions((question) => Promise.race([rl.question(question), cancelled]));
  } finally {
    cancelled.catch(() => undefined);
    rl.close();
  }
}

/**
 * Shows the last settings, as AutoGPT does at a start in the same place, and asks whether to go on with
 * them: true for y, false for n. They come from a file in the workspace, so they are shown escaped.
 */
export function askToContinue(last: GoalSetup): Promise<boolean> {
  return withQuestions(async (ask) => {
    const goals = last.goals.map((goal, i) => `  ${i + 1}. ${goal}`).join('\n');
    process.stdout.write(
      terminalSafe(
        `Welcome back! Would you like me to return to being ${last.name}?\n` +
          `Continue with the last settings?\nName:  ${last.name}\nRole:  ${last.role}\nGoals:\n${goals}\n`,
      ),
    );
    for (;;) {
      const answer = (await ask('Continue (y/n): ')).trim().toLowerCase();
      if (answer === 'y' || answer === 'yes') return true;
      if (answer === 'n' || answer === 'no') return false;
    }
  });
}

/** Asks for what the flags did not give. */
export function askForGoals(given: { name?: string; role?: string }): Promise<GoalSetup> {
  return withQuestions(async (ask) => {
    process.stdout.write(
      'Welcome to meta-agent run! Enter the name of your AI and its role below. Entering nothing will load defaults.\n',
    );
    const name =
      given.name ?? ((await ask(`Name your AI (for example '${DEFAULTS.name}'): `)).trim() || DEFAULTS.name);
    process.stdout.write(`${name} here! I am at your service.\n`);
    const role =
      given.role ??
      ((await ask(`Describe your AI's role (for example '${DEFAULTS.role}'): `)).trim() || DEFAULTS.role);
    process.stdout.write(
      'Enter up to 5 goals for your AI. Enter nothing when finished (nothing at all loads the defaults).\n',
    );
    const goals: string[] = [];
    while (goals.length < 5) {
      const goal = (await ask(`Goal ${goals.length + 1}: `)).trim();
      if (!goal) break;
      goals.push(goal);
    }
    return { name, role, goals: goals.length > 0 ? goals : DEFAULTS.goals };
  });
}
