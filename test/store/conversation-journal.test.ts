import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStateFile, StateFile } from '../../src/store/conversation-journal.js';
import { Interpreter } from '../../src/engine/interpreter.js';
import type { ConversationState } from '../../src/engine/state.js';
import { graphOf, noModels } from '../support/agents.js';

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

/** A conversation that goes on as long as the user does; `count` in its root frame counts the replies. */
const endless = graphOf(
  [
    { name: 'start1', action: 'code', instruction: 'count = 0', transitions: ['talk'] },
    { name: 'talk', action: 'chat_exact', instruction: 'Reply $count.', transitions: ['bump'] },
    { name: 'bump', action: 'code', instruction: 'count = count + 1', transitions: ['talk'] },
  ],
  {},
  'endless',
);

/** Runs `replies` replies, saving each in `file`; returns the state reached and the file's size after each save. */
async function talk(file: StateFile, replies: number, state?: ConversationState) {
  const agent = await Interpreter.create({ graph: endless, models: noModels });
  const sizes: number[] = [];
  try {
    for (let i = 0; i < replies; i++) {
      state = (await agent.reply(i === 0 && !state ? undefined : 'more', state)).state;
      await file.save(state);
      sizes.push((await readFile(file.path)).length);
    }
    return { state: state!, sizes };
  } finally {
    agent.dispose();
  }
}

describe('the --state file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'meta-agent-state-file-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('appends what each reply changed, and reads back the state the conversation reached', async () => {
    const path = join(dir, 'short.state');
    const { state } = await talk(new StateFile(path), 20);
    expect((await readFile(path, 'utf8')).split('\n').filter(Boolean)).toHaveLength(20);
    expect(await loadStateFile(path)).toEqual(state);
  });

  it('writes as many bytes for the 1000th reply as for the 10th, and stays readable across compactions', async () => {
    const path = join(dir, 'long.state');
    const { state, sizes } = await talk(new StateFile(path), 1000);
    const appended = sizes.slice(1).map((size, i) => size - sizes[i]!);
    const typical = appended[10]!;
    // Compaction rewrites the whole state now and then; every other save appends one small line, a few
    // digits longer as the counts grow.
    const grown = appended.filter((bytes) => bytes > 1.2 * typical);
    expect(grown).toEqual([]);
    expect(appended.filter((bytes) => bytes <= 0).length).toBeGreaterThan(0);
    expect(sizes.at(-1)!).toBeLessThan(4 * sizes.findLast((size, i) => size < sizes[i - 1]!)!);
    const read = await loadStateFile(path);
    expect(read).toEqual(state);
    expect(read!.stack[0]!.variables.count).toBe(999);
    expect(read!.stack[0]!.turns).toHaveLength(1000);
  });

  it('continues a file another process wrote, and skips a last line a crash tore', async () => {
    const path = join(dir, 'torn.state');
    const first = await talk(new StateFile(path), 5);
    await appendFile(path, '{"format":"meta-agent/state@2","graphName":"end');
    expect(await loadStateFile(path)).toEqual(first.state);
    const { state } = await talk(new StateFile(path), 3, first.state);
    expect(await loadStateFile(path)).toEqual(state);
    expect(state.stack[0]!.variables.count).toBe(7);
  });

  it('keeps a chmod 600 state file private when a later process compacts it', async () => {
    const path = join(dir, 'private.state');
    const first = await talk(new StateFile(path), 3);
    await chmod(path, 0o600);
    // A new process's first save rewrites the whole journal through a temporary file.
    await talk(new StateFile(path), 2, first.state);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('removes the temporary file a process killed while compacting left behind', async () => {
    const path = join(dir, 'crashed.state');
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    const stale = join(dir, `.crashed.state.${dead}.0badc0de.tmp`);
    await writeFile(stale, '{"half": ');
    await talk(new StateFile(path), 1);
    expect(existsSync(stale)).toBe(false);
    expect(await loadStateFile(path)).toBeDefined();
  });

  it('reads a state file that starts with a UTF-8 byte order mark', async () => {
    const path = join(dir, 'bom.state');
    const { state } = await talk(new StateFile(path), 3);
    await writeFile(path, `\ufeff${await readFile(path, 'utf8')}`);
    expect(await loadStateFile(path)).toEqual(state);
  });

  it('refuses a file with a damaged line before its end, naming the line', async () => {
    const path = join(dir, 'damaged.state');
    await talk(new StateFile(path), 4);
    const lines = (await readFile(path, 'utf8')).split('\n');
    lines[2] = '{"stack": 3}';
    await writeFile(path, lines.join('\n'));
    await expect(loadStateFile(path)).rejects.toThrow(
      /damaged\.state is not a meta-agent conversation state: line 3 is damaged \(/,
    );
  });

  it('reads a state saved by an earlier version, whose log of nodes entered drives requiredRevisit', async () => {
    const path = join(dir, 'earlier.state');
    const { state } = await talk(new StateFile(join(dir, 'scratch.state')), 2);
    const { steps, lastEntered, ...rest } = state;
    const earlier = {
      ...rest,
      format: 'meta-agent/state@1',
      visited: ['start1', 'talk', 'bump', 'talk'].map((node) => ({ node, depth: 0 })),
      modelCalls: [{ role: 'chatbot', node: 'talk', model: 'scripted', output: 'Reply 0.' }],
    };
    await writeFile(path, JSON.stringify(earlier, null, 2));
    expect(await loadStateFile(path)).toEqual({ ...state, steps, lastEntered });
  });

  it('loses no saved reply when the process is killed with SIGKILL at any moment', async () => {
    const path = join(dir, 'killed.state');
    let saved = 0;
    for (const ms of [40, 400, 150, 900, 60, 600]) {
      const child = spawn(
        process.execPath,
        [
          '--no-node-snapshot',
          '--experimental-transform-types',
          '--disable-warning=ExperimentalWarning',
          '--import',
          here('../engine/ts-register.mjs'),
          here('./conversation-journal-child.ts'),
          path,
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let printed = '';
      child.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
      // Kill only once the child is saving, so each round interrupts a run of saves somewhere.
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      await new Promise((resolve) => setTimeout(resolve, ms));
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      const reported = Math.max(...printed.split('\n').filter(Boolean).map(Number));
      const state = await loadStateFile(path);
      expect(state!.stack[0]!.turns.length).toBeGreaterThanOrEqual(reported);
      expect(reported).toBeGreaterThan(saved);
      saved = reported;
    }
  });
});
