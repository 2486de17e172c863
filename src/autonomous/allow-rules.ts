/**
 * Allow rules remembered per workspace: the commands a user answered "always" for, kept in the
 * workspace's reserved `.meta-agent/allow.json`, which the agent's own file commands cannot reach.
 * The file is read as untrusted input: anything but a list of known command names is ignored, loudly.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { UserError } from '../errors.js';
import { closestName } from '../graph/names.js';
import { writeTextFile } from '../write-file.js';
import { RESERVED_FOLDER } from '../../tools/workspace.js';

export function allowRulesPath(workspace: string): string {
  return join(workspace, RESERVED_FOLDER, 'allow.json');
}

/** The remembered rules, and what was wrong with the file when something was. */
export async function loadAllowRules(
  workspace: string,
  known: readonly string[],
): Promise<{ commands: string[]; problem?: string }> {
  let text: string;
  try {
    text = await readFile(allowRulesPath(workspace), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { commands: [] };
    return { commands: [], problem: (error as Error).message };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { commands: [], problem: `not JSON (${(error as Error).message})` };
  }
  const listed = (value as { commands?: unknown } | null)?.commands;
  if (!Array.isArray(listed)) return { commands: [], problem: 'expected {"commands": ["name", …]}' };
  const commands = listed.filter((name): name is string => typeof name === 'string' && known.includes(name));
  const unknown = listed.length - commands.length;
  return unknown > 0 ? { commands, problem: `${unknown} unknown command name(s) ignored` } : { commands };
}

/** Adds `command` to the workspace's rules. */
export async function rememberAllowRule(
  workspace: string,
  current: readonly string[],
  command: string,
): Promise<string[]> {
  const commands = [...new Set([...current, command])].sort();
  await mkdir(join(workspace, RESERVED_FOLDER), { recursive: true });
  await writeTextFile(allowRulesPath(workspace), `${JSON.stringify({ commands }, null, 2)}\n`);
  return commands;
}

/** Refuses an `--allow` name that is no command `known` has, with the closest one (exit 2). */
export function checkAllowNames(allow: readonly string[], known: readonly string[]): void {
  for (const name of allow) {
    if (known.includes(name)) continue;
    const guess = closestName(name, [...known]);
    throw new UserError(
      `--allow: there is no command "${name}"${guess ? `; did you mean "${guess}"?` : ''}`,
      2,
      `commands: ${known.join(', ')}`,
    );
  }
}

/**
 * What runs without asking: the `--allow` names (checked against `offered`) and the rules remembered
 * for the workspace; a rules file with something wrong in it is reported through `warn`.
 */
export async function allowedCommands(
  allow: readonly string[],
  workspace: string,
  offered: readonly string[],
  warn: (message: string) => void,
): Promise<Set<string>> {
  checkAllowNames(allow, offered);
  const remembered = await loadAllowRules(workspace, offered);
  if (remembered.problem) warn(`${allowRulesPath(workspace)}: ${remembered.problem}`);
  return new Set([...allow, ...remembered.commands]);
}
