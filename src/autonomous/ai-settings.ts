/**
 * `ai_settings.yaml` as AutoGPT 0.2.x keeps it: the agent's name, role and goals under `ai_name`,
 * `ai_role` and `ai_goals`. A new run writes it into its workspace's reserved folder once its goals are
 * given, and the next start there offers it again. The file is data from outside all the same (the user's
 * edit, a shared folder, a program with a shell in the workspace): it is read with a size cap, through
 * its schema, and never starts a run unless a person said so (a "y" after seeing it, or --ai-settings).
 */
import { constants } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { RESERVED_FOLDER } from '../../tools/workspace-path.js';
import { replaceFile } from '../write-file.js';

/** A run's name, role and goals, as the questions, the flags or the file give them. */
export interface AgentSettings {
  name: string;
  role: string;
  goals: string[];
}

/** A settings file larger than this is refused unread: three short fields need a few KiB. */
const MAX_SETTINGS_BYTES = 64 * 1024;

// eslint-disable-next-line no-control-regex -- control characters are what this refuses
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;

const missingOr =
  (kind: string) =>
  (issue: { input?: unknown }): string =>
    issue.input === undefined ? 'missing' : `must be ${kind}`;

const field = (max: number) =>
  z
    .string({ error: missingOr('text') })
    .trim()
    .min(1, 'must not be empty')
    .max(max, `at most ${max} characters`)
    .refine((text) => !CONTROL.test(text), 'one line, without control characters');

/** The file's schema: AutoGPT 0.2.x's three keys; other keys (later versions' `api_budget`) are ignored. */
const settingsSchema = z.object(
  {
    ai_name: field(100),
    ai_role: field(2000),
    ai_goals: z
      .array(field(2000), { error: missingOr('a list of goals') })
      .min(1, 'at least one goal')
      .max(5, 'at most 5 goals'),
  },
  { error: 'not a mapping with ai_name, ai_role and ai_goals' },
);

/** Where the workspace keeps the last settings: its reserved folder, out of the file commands' reach. */
export function aiSettingsPath(workspace: string): string {
  return join(workspace, RESERVED_FOLDER, 'ai_settings.yaml');
}

/** The settings in a file, or the one-line reason it holds none. */
export type SettingsRead =
  { ok: true; settings: AgentSettings } | { ok: false; problem: string; missing?: true };

/**
 * Reads the settings at `path`. `follow`: a symlink there is followed (a path the user named); our own
 * copy in a workspace is read only as the regular file it should be. Never blocks on a FIFO or a device.
 */
export async function readAiSettings(path: string, follow: boolean): Promise<SettingsRead> {
  const text = await readCapped(path, follow);
  if (typeof text !== 'string') return text;
  const { parse } = await import('yaml');
  let data: unknown;
  try {
    data = parse(text, { maxAliasCount: 10 });
  } catch (error) {
    const first = (error as Error).message.split('\n')[0]!.replace(/:$/, '');
    return { ok: false, problem: `not YAML: ${first}` };
  }
  const checked = settingsSchema.safeParse(data);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    const where = issue.path.map(String).join('.');
    return { ok: false, problem: where ? `${where}: ${issue.message}` : issue.message };
  }
  const { ai_name, ai_role, ai_goals } = checked.data;
  return { ok: true, settings: { name: ai_name, role: ai_role, goals: ai_goals } };
}

/** Keeps `settings` as the workspace's last settings, in AutoGPT's layout. A link in its place is replaced. */
export async function writeAiSettings(workspace: string, settings: AgentSettings): Promise<string> {
  const path = aiSettingsPath(workspace);
  const { stringify } = await import('yaml');
  const text = stringify({ ai_name: settings.name, ai_role: settings.role, ai_goals: settings.goals });
  await mkdir(dirname(path), { recursive: true });
  await replaceFile(path, text);
  return path;
}

async function readCapped(path: string, follow: boolean): Promise<string | SettingsRead> {
  const flags = constants.O_RDONLY | constants.O_NONBLOCK | (follow ? 0 : constants.O_NOFOLLOW);
  let handle;
  try {
    handle = await open(path, flags);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { ok: false, problem: 'no such file', missing: true };
    if (code === 'ELOOP') return { ok: false, problem: 'a symbolic link, not the file it should be' };
    return { ok: false, problem: (error as Error).message };
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return { ok: false, problem: 'not a regular file' };
    if (stats.size > MAX_SETTINGS_BYTES)
      return {
        ok: false,
        problem: `${stats.size} bytes; a settings file holds at most ${MAX_SETTINGS_BYTES}`,
      };
    // Read to the cap, not to the size seen: the file may grow while it is read.
    const buffer = Buffer.alloc(MAX_SETTINGS_BYTES + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0 || (length += bytesRead) === buffer.length) break;
    }
    if (length > MAX_SETTINGS_BYTES) return { ok: false, problem: `more than ${MAX_SETTINGS_BYTES} bytes` };
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    await handle.close();
  }
}
