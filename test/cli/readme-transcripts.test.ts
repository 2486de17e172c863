import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transcriptsOf, type Transcript } from '../support/readme-transcripts.js';
import { cliBinDir, cliEnv } from '../support/run-cli.js';

/**
 * Every transcript in the README (a console block that shows output) is run here as written, in a
 * fresh folder of the clone's kind (`examples/` in it, `meta-agent` on the PATH), and what comes out
 * must be what the README shows. Only what differs from run to run is set aside: durations and the
 * random id of a goal run.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const transcripts = transcriptsOf(await readFile(join(root, 'README.md'), 'utf8'));

/** What truly varies between runs, on both sides replaced by a mark. */
const VARYING: [RegExp, string][] = [
  [/\b\d+\.\d s\b/g, '‹seconds› s'],
  [/\bAgent-[0-9a-f]{12}\b/g, 'Agent-‹run id›'],
];

function normalize(lines: string[]): string {
  return VARYING.reduce((text, [pattern, mark]) => text.replace(pattern, mark), lines.join('\n'));
}

let binDir: string;
const folders: string[] = [];
beforeAll(() => {
  binDir = cliBinDir();
});
afterAll(async () => {
  for (const folder of [binDir, ...folders]) await rm(folder, { recursive: true, force: true });
});

/** Runs one command line with bash, as a user types it, its stderr and stdout in the order written. */
function shell(command: string, cwd: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const env = cliEnv({ PATH: `${binDir}${delimiter}${process.env.PATH ?? ''}` });
    const child = spawn('bash', ['-c', `{\n${command}\n} 2>&1`], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', reject);
    child.on('close', () => resolve(output.replace(/\n$/, '').split('\n')));
  });
}

async function run(transcript: Transcript): Promise<{ shown: string; printed: string }> {
  const cwd = await mkdtemp(join(tmpdir(), 'readme-transcript-'));
  folders.push(cwd);
  await symlink(join(root, 'examples'), join(cwd, 'examples'));
  const shown: string[] = [];
  const printed: string[] = [];
  for (const { command, output } of transcript.commands) {
    shown.push(`$ ${command}`, ...output);
    printed.push(`$ ${command}`, ...(await shell(command, cwd)));
  }
  return { shown: normalize(shown), printed: normalize(printed) };
}

describe("the README's transcripts", () => {
  it('are found: the offline session and the goal run', () => {
    expect(transcripts.map((t) => t.commands[0]!.command.split(' ').slice(0, 2).join(' '))).toEqual([
      'meta-agent design',
      'meta-agent run',
    ]);
  });

  it.each(transcripts.map((t) => [t.line, t] as const))(
    'shows what its commands print (the block at README.md line %i)',
    async (_line, transcript) => {
      const { shown, printed } = await run(transcript);
      expect(printed).toBe(shown);
    },
  );
});
