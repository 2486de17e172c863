/**
 * The questions a run asks in a terminal when no --goal was given, as seed 004 shows AutoGPT asking
 * them: a name, a role, and up to five goals (an empty answer ends the list; none at all keeps a default).
 */
import { createInterface } from 'node:readline/promises';
import { UserError } from '../errors.js';

export interface GoalSetup {
  name: string;
  role: string;
  goals: string[];
}

const DEFAULTS: GoalSetup = {
  name: 'Writer',
  role: 'an AI that writes short, clear texts into files in its workspace',
  goals: ['Write a haiku about the first hour with a new tool to haiku.txt', 'Shut down when you are done'],
};

/** Asks for what the flags did not give; Ctrl+C or the end of input while asking cancels (exit 130). */
export async function askForGoals(given: { name?: string; role?: string }): Promise<GoalSetup> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  const cancelled = new Promise<never>((_, reject) =>
    rl.once('close', () => reject(new UserError('cancelled before the run started', 130))),
  );
  const ask = (question: string) => Promise.race([rl.question(question), cancelled]);
  try {
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
  } finally {
    cancelled.catch(() => undefined);
    rl.close();
  }
}
