import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Interpreter } from '../../src/engine/interpreter.js';
import { loadState, newState, saveState } from '../../src/engine/state.js';
import { fixture, noModels } from '../support/agents.js';

const run = promisify(execFile);
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

/** One reply in a fresh Node process that reads and writes the state file. */
async function replyInChild(statePath: string, userText: string): Promise<{ reply: string; ended: boolean }> {
  const { stdout } = await run(process.execPath, [
    '--no-node-snapshot',
    '--experimental-transform-types',
    '--disable-warning=ExperimentalWarning',
    '--import',
    here('./ts-register.mjs'),
    here('./resume-child.ts'),
    'tally',
    statePath,
    userText,
  ]);
  return JSON.parse(stdout) as { reply: string; ended: boolean };
}

/** One reply by a new interpreter that knows the conversation only from its saved JSON. */
async function replyInNewInterpreter(text: string, userText: string) {
  const agent = await Interpreter.create({ graph: fixture('tally'), models: noModels });
  try {
    return await agent.reply(userText, loadState(text));
  } finally {
    agent.dispose();
  }
}

describe('resuming a saved conversation', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'meta-agent-resume-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('continues from JSON alone in another interpreter, even paused inside a function', async () => {
    const first = await replyInNewInterpreter(saveState(newState(fixture('tally'))), '');
    expect(first.reply).toBe('Message 0?');
    expect(first.state.stack).toHaveLength(2);
    const second = await replyInNewInterpreter(saveState(first.state), 'hello');
    expect(second.reply).toBe('Message 1?');
  });

  it('continues in other processes from a state file', async () => {
    const statePath = join(dir, 'tally.state.json');
    const first = await replyInNewInterpreter(saveState(newState(fixture('tally'))), '');
    await writeFile(statePath, saveState(first.state));

    expect(await replyInChild(statePath, 'one')).toEqual({ reply: 'Message 1?', ended: false });
    expect(await replyInChild(statePath, 'two')).toEqual({ reply: 'Message 2?', ended: false });

    const third = await replyInNewInterpreter(await readFile(statePath, 'utf8'), 'three');
    expect(third.reply).toBe('Got 3 messages. Bye.');
    expect(third.state.stack).toHaveLength(1);
    expect(third.state.visits['listen(n)']).toBe(3);
    expect((await replyInNewInterpreter(saveState(third.state), '')).ended).toBe(true);
  });

  it('refuses a file that is not a saved state, saying why', () => {
    expect(() => loadState('{"format":"something-else"}', 'x.json')).toThrow(
      /x\.json is not a meta-agent conversation state \(meta-agent\/state@2\) at format/,
    );
    expect(() => loadState('not json', 'x.json')).toThrow(/x\.json is not JSON/);
  });
});

describe('a saved conversation and its graph', () => {
  it('refuses to continue a conversation of another graph', async () => {
    const agent = await Interpreter.create({ graph: fixture('fibonacci'), models: noModels });
    try {
      await expect(agent.reply('hi', newState(fixture('tally')))).rejects.toThrow(
        'the state holds a conversation with the graph "tally", not "fibonacci"',
      );
    } finally {
      agent.dispose();
    }
  });
});
