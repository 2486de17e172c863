/**
 * What the tmux tests of `meta-agent chat` share: the built CLI (`npx tsc -p .` first) as a command
 * line for tmux, and the environment it runs in.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hasTmux } from './tmux.js';

/** The repository root: the CLI's working directory. */
export const root = fileURLToPath(new URL('../../', import.meta.url));

const builtMain = join(root, 'dist/cli/main.js');

/** Whether these tests can run here; without tmux they skip, and their title says why. */
export const tmuxInstalled = await hasTmux();
export const tmuxSkipNote = tmuxInstalled
  ? ''
  : ' (skipped: tmux is not installed; apt-get install tmux, as .ci/run does)';

/** Fails with what to do when the CLI is not built. */
export function checkCanRun(): void {
  if (!existsSync(builtMain))
    throw new Error(`the CLI is not built (${builtMain} is missing): run \`npm run build\` first`);
}

/** `meta-agent chat ARGS` as tmux starts it. */
export function chatCommand(args: readonly string[]): string[] {
  return [process.execPath, '--no-node-snapshot', join(root, 'bin/meta-agent.js'), 'chat', ...args];
}

/**
 * The environment of the CLI: the caller's, less its model settings, in a colour terminal, with `CI`
 * set as CI runners set it (Ink stops drawing live frames there unless told the terminal is interactive).
 */
export function cliEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (
      value !== undefined &&
      !/^(OPENAI_|META_AGENT_|TMUX|NO_COLOR$|FORCE_COLOR$|CI$|CONTINUOUS_INTEGRATION$)/.test(name)
    )
      env[name] = value;
  }
  return { ...env, TERM: 'xterm-256color', CI: 'true' };
}
