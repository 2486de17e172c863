/**
 * One reply of a saved conversation, in a process of its own: reads the state file, replies, writes the
 * state back and prints `{ reply, ended }`. Usage: resume-child.ts FIXTURE STATE_FILE USER_TEXT
 */
import { readFile, writeFile } from 'node:fs/promises';
import { Interpreter } from '../../src/engine/interpreter.js';
import { loadState, saveState } from '../../src/engine/state.js';
import { fixture, noModels } from '../support/agents.js';

const [name, statePath, userText] = process.argv.slice(2);
if (!name || !statePath) throw new Error('usage: resume-child.ts FIXTURE STATE_FILE USER_TEXT');
const agent = await Interpreter.create({ graph: fixture(name), models: noModels });
try {
  const state = loadState(await readFile(statePath, 'utf8'), statePath);
  const result = await agent.reply(userText, state);
  await writeFile(statePath, saveState(result.state));
  process.stdout.write(JSON.stringify({ reply: result.reply, ended: result.ended }));
} finally {
  agent.dispose();
}
