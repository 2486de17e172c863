/**
 * The `.env` file of the folder the CLI starts in: the model settings of `.env.example`, kept beside a
 * project instead of exported in a shell. Read once, before anything else of the CLI runs, with Node's own
 * parser (`util.parseEnv`, the format of `node --env-file`).
 */
import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';

/** Names the file to read instead of `.env`; `off` reads none (a restarted process has read it already). */
export const ENV_FILE_VARIABLE = 'META_AGENT_ENV_FILE';

/**
 * Sets each variable of the env file that `env` leaves unset or empty (empty counts as unset, as for
 * every setting: README, "Models"), so the shell's own settings win. Returns what the user should hear
 * of the file, one line each: it cannot be read, or lines of it are not `NAME=value`. No file, no words.
 */
export function applyEnvFile(env: NodeJS.ProcessEnv = process.env): string[] {
  const path = env[ENV_FILE_VARIABLE] || '.env';
  if (path === 'off') return [];
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return [];
    return [
      `cannot read ${path} (${code === 'EISDIR' ? 'a folder' : (code ?? 'unreadable')}): its variables are not set`,
    ];
  }
  for (const [name, value] of Object.entries(parseEnv(text))) if (!env[name]) env[name] = value;
  const ignored = ignoredLines(text);
  if (ignored.length === 0) return [];
  const which = ignored.length === 1 ? `line ${ignored[0]} is` : `lines ${ignored.join(', ')} are`;
  return [`${path} ${which} not NAME=value, so ${ignored.length === 1 ? 'it is' : 'they are'} ignored`];
}

/**
 * The numbers (from 1) of the lines Node's parser skips without a word: neither blank, a `#` comment, an
 * assignment nor inside a quoted value that spans lines.
 */
function ignoredLines(text: string): number[] {
  const lines = text.split(/\r?\n/);
  const ignored: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    const assignment = /^(?:export\s+)?([^=\s][^=]*?)\s*=\s*(.*)$/.exec(line);
    if (!assignment) {
      ignored.push(i + 1);
      continue;
    }
    // A value that opens a quote it does not close on its line runs on to the line that closes it.
    const value = assignment[2]!;
    const quote = value[0];
    if (quote !== '"' && quote !== "'" && quote !== '`') continue;
    if (value.indexOf(quote, 1) !== -1) continue;
    const closing = lines.findIndex((later, j) => j > i && later.includes(quote));
    if (closing !== -1) i = closing;
  }
  return ignored;
}
