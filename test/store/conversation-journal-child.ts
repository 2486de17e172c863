/**
 * A conversation that never ends, saved with `--state`'s StateFile after every reply: prints the number
 * of turns saved after each save, until it is killed. Usage: conversation-journal-child.ts STATE_FILE
 */
import { loadStateFile, StateFile } from '../../src/store/conversation-journal.js';
import { Interpreter } from '../../src/engine/interpreter.js';
import { graphOf, noModels } from '../support/agents.js';

const [path] = process.argv.slice(2);
if (!path) throw new Error('usage: conversation-journal-child.ts STATE_FILE');
const graph = graphOf(
  [{ name: 'talk', action: 'chat_exact', instruction: 'Go on.', transitions: ['talk'] }],
  {},
  'endless',
);
const agent = await Interpreter.create({ graph, models: noModels });
const file = new StateFile(path);
let state = await loadStateFile(path);
for (;;) {
  const result = await agent.reply('more', state);
  await file.save(result.state);
  state = result.state;
  process.stdout.write(`${state.stack[0]!.turns.length}\n`);
}
