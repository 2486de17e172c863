/**
 * Allow rules: the commands a user answered "always" for, per workspace. They are consent, so they are
 * kept where only the user writes: `allow.json` in the user's configuration folder (consent.ts), keyed
 * by the workspace's real path. A workspace's own `.meta-agent/allow.json`, where earlier versions kept
 * them, is not read: anyone who can write to the folder could have planted it. The file is still read
 * as untrusted input: anything but lists of known command names is ignored, loudly.
 */
import { access, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { UserError } from '../errors.js';
import { closestName } from '../graph/names.js';
import { MCP_PREFIX } from '../mcp/names.js';
import { patternOf } from '../allow-patterns.js';
import { writeTextFile } from '../write-file.js';
import { RESERVED_FOLDER } from '../../tools/workspace-path.js';
import { configInsideWorkspace, userConfigDir } from './consent.js';

const rulesSchema = z.object({ workspaces: z.record(z.string(), z.array(z.unknown())) });

/** The user's allow rules file, in `config` (the user's configuration folder). */
export function allowRulesPath(config: string = userConfigDir()): string {
  return join(config, 'allow.json');
}

/** The rules remembered for `workspace` (its real path), and what was wrong with the file when something was. */
export async function loadAllowRules(
  workspace: string,
  known: readonly string[],
  config: string = userConfigDir(),
): Promise<{ commands: string[]; problem?: string }> {
  const inside = configInsideWorkspace(config, workspace);
  if (inside) return { commands: [], problem: `${inside}, so its allow rules are not used` };
  const read = await readRules(config);
  if ('problem' in read) return { commands: [], problem: `${allowRulesPath(config)}: ${read.problem}` };
  const listed = read.rules[workspace] ?? [];
  const commands = listed.filter(
    (name): name is string => typeof name === 'string' && allowable(name, known),
  );
  const unknown = listed.length - commands.length;
  return unknown > 0
    ? { commands, problem: `${allowRulesPath(config)}: ${unknown} unknown command name(s) ignored` }
    : { commands };
}

/** Adds `command` to the rules of `workspace` (its real path); returns that workspace's rules. */
export async function rememberAllowRule(
  workspace: string,
  current: readonly string[],
  command: string,
  config: string = userConfigDir(),
): Promise<string[]> {
  const inside = configInsideWorkspace(config, workspace);
  if (inside) throw new UserError(`cannot remember "always": ${inside}`, 1, 'set META_AGENT_CONFIG_DIR');
  const read = await readRules(config);
  // A broken file is not overwritten: what the user wrote in it stays theirs to fix.
  if ('problem' in read)
    throw new UserError(`cannot remember "always": ${allowRulesPath(config)}: ${read.problem}`);
  const commands = [...new Set([...current, command])].sort();
  const workspaces = { ...read.rules, [workspace]: commands };
  await mkdir(config, { recursive: true, mode: 0o700 });
  await writeTextFile(allowRulesPath(config), `${JSON.stringify({ workspaces }, null, 2)}\n`);
  return commands;
}

async function readRules(
  config: string,
): Promise<{ rules: Record<string, unknown[]> } | { problem: string }> {
  let text: string;
  try {
    text = await readFile(allowRulesPath(config), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { rules: {} };
    return { problem: (error as Error).message };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { problem: `not JSON (${(error as Error).message})` };
  }
  const parsed = rulesSchema.safeParse(value);
  if (!parsed.success) return { problem: 'expected {"workspaces": {"/path/of/workspace": ["command", …]}}' };
  return { rules: parsed.data.workspaces };
}

/**
 * Whether `name` may be an allow rule: a command `known` has, a pattern matching one, or a name of an
 * MCP server's tools (`mcp__…`), which may be allowed while its server is not running.
 */
function allowable(name: string, known: readonly string[]): boolean {
  if (known.includes(name) || name.startsWith(MCP_PREFIX)) return true;
  if (!name.includes('*')) return false;
  const pattern = patternOf(name);
  return known.some((command) => pattern.test(command));
}

/** Refuses an `--allow` name that is no command `known` has, with the closest one (exit 2). */
export function checkAllowNames(allow: readonly string[], known: readonly string[]): void {
  for (const name of allow) {
    if (allowable(name, known)) continue;
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
 * for the workspace (its real path); a rules file with something wrong in it, or one planted in the
 * workspace, is reported through `warn`.
 */
export async function allowedCommands(
  allow: readonly string[],
  workspace: string,
  offered: readonly string[],
  warn: (message: string) => void,
  config: string = userConfigDir(),
): Promise<Set<string>> {
  checkAllowNames(allow, offered);
  const remembered = await loadAllowRules(workspace, offered, config);
  if (remembered.problem) warn(remembered.problem);
  const planted = join(workspace, RESERVED_FOLDER, 'allow.json');
  if (
    await access(planted).then(
      () => true,
      () => false,
    )
  )
    warn(
      `${planted} is not read: a file in the workspace cannot allow commands (anyone who can write there could have put it); answer "a" at a prompt to remember a command in ${allowRulesPath(config)}`,
    );
  return new Set([...allow, ...remembered.commands]);
}
