import { existsSync } from 'node:fs';
import { appendFile, copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EventBus, type AgentEvent } from '../../src/events.js';
import { loadGraphFile } from '../../src/graph/load.js';
import { createScriptedModels } from '../../src/llm/scripted.js';
import type { ModelSet } from '../../src/llm/types.js';
import { callAutogram } from '../../tools/call-autogram.js';
import type { WorkspaceFiles } from '../../tools/command.js';
import { deleteAgent } from '../../tools/delete-agent.js';
import { listAgents } from '../../tools/list-agents.js';
import { messageAgent } from '../../tools/message-agent.js';
import { startAgent } from '../../tools/start-agent.js';
import { AutogramAgents, MAX_REPLY_CHARS, MAX_SUB_AGENTS, capped } from '../../tools/sub-agents.js';
import { subAgentOptions } from '../support/opener.js';

const fixture = (name: string): string =>
  fileURLToPath(new URL(`../fixtures/tools/${name}`, import.meta.url));

/**
 * A small jailed workspace over a folder (tools/workspace.ts was not committed when these tests were
 * written): a path is resolved against the root and refused when it leaves it.
 */
function folderWorkspace(root: string): WorkspaceFiles {
  const inside = (file: string): string => {
    const path = resolve(root, file);
    const rel = relative(root, path);
    if (file.includes('\0') || rel.startsWith('..') || isAbsolute(rel))
      throw new Error(`${file} is outside the workspace`);
    return path;
  };
  return {
    root,
    read: async (file) => readFile(inside(file), 'utf8'),
    readBytes: async (file) => readFile(inside(file)),
    write: async (file, text) => {
      const path = inside(file);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, text);
    },
    append: async (file, text) => appendFile(inside(file), text),
    remove: async (file) => rm(inside(file)),
    list: async (directory) =>
      (await readdir(inside(directory), { recursive: true, withFileTypes: true }))
        .filter((entry) => entry.isFile())
        .map((entry) => relative(root, join(entry.parentPath, entry.name)))
        .sort(),
  };
}

const signal = new AbortController().signal;
let dir: string;
let workspace: WorkspaceFiles;
let models: ModelSet;
let agents: AutogramAgents;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sub-agents-'));
  await mkdir(join(dir, 'workspace'));
  workspace = folderWorkspace(join(dir, 'workspace'));
  for (const graph of ['pirate.autogram.json', 'goodbye.autogram.json', 'math.autogram.json'])
    await copyFile(fixture(graph), join(workspace.root, graph));
  models = await createScriptedModels(fixture('pirate.script.json'));
  agents = new AutogramAgents(subAgentOptions(workspace, models));
});

afterEach(async () => {
  agents.dispose();
  await rm(dir, { recursive: true, force: true });
});

describe('sub-agents', () => {
  it('starts an agent from a graph file and returns its opening line and its reply to the prompt', async () => {
    const started = await agents.start('pirate', 'pirate.autogram.json', 'Hello there', signal);
    expect(started).toEqual({
      key: 'agent-1',
      reply: '[opening] Ahoy!\n[reply to your prompt] Arr, one.',
    });
  });

  it('continues the conversation over two messages', async () => {
    await agents.start('pirate', 'pirate.autogram.json', 'Hello', signal);
    expect(await agents.message('agent-1', 'How are you?', signal)).toBe('Arr, two.');
    expect(await agents.message('agent-1', 'And now?', signal)).toBe('Arr, three.');
  });

  it('lists the agents with their graph files', async () => {
    await agents.start('pirate', 'pirate.autogram.json', 'Hello', signal);
    await agents.start('waver', 'goodbye.autogram.json', 'Hi', signal);
    expect(agents.list()).toEqual([
      { key: 'agent-1', name: 'pirate', task: 'pirate.autogram.json', graph: 'pirate.autogram.json' },
      { key: 'agent-2', name: 'waver', task: 'goodbye.autogram.json', graph: 'goodbye.autogram.json' },
    ]);
  });

  it('refuses a message to a deleted agent, naming the agents there are', async () => {
    await agents.start('pirate', 'pirate.autogram.json', 'Hello', signal);
    await agents.start('waver', 'goodbye.autogram.json', 'Hi', signal);
    expect(agents.remove('agent-1')).toBe(true);
    await expect(agents.message('agent-1', 'Still there?', signal)).rejects.toThrow(
      'no sub-agent "agent-1"; the sub-agents are agent-2',
    );
  });

  it('refuses an unknown key when there are no agents', async () => {
    await expect(agents.message('agent-7', 'Hi', signal)).rejects.toThrow(
      'no sub-agent "agent-7"; none is running (start one with start_agent)',
    );
    expect(agents.remove('agent-7')).toBe(false);
  });

  it('says when an agent has ended its conversation, and refuses messages after', async () => {
    const started = await agents.start('waver', 'goodbye.autogram.json', 'Hi', signal);
    expect(started.reply).toBe(
      '[opening] Hello.\n[reply to your prompt] Goodbye.\n[agent-1 has said its last words: the next message ends its conversation]',
    );
    expect(await agents.message('agent-1', 'Wait', signal)).toBe(
      '[agent-1 ended its conversation: it takes no more messages]',
    );
    await expect(agents.message('agent-1', 'Hello?', signal)).rejects.toThrow(
      'agent-1 (waver) has ended its conversation',
    );
  });

  it('calls a function node and returns its value', async () => {
    expect(await agents.call('math.autogram.json', 'double', [21], signal)).toBe(42);
    expect(await agents.call('math.autogram.json', 'pair(a, b)', ['x', [1]], signal)).toEqual({
      a: 'x',
      b: [1],
    });
  });

  it('names the callable nodes when the function is unknown', async () => {
    await expect(agents.call('math.autogram.json', 'triple', [1], signal)).rejects.toThrow(
      'math.autogram.json has no callable node triple(…); its callable nodes: double(x), pair(a, b)',
    );
  });

  it('refuses a graph path outside the workspace', async () => {
    await copyFile(fixture('math.autogram.json'), join(dir, 'outside.autogram.json'));
    // The workspace words the refusal; the sub-agents say which graph file it was.
    await expect(agents.call('../outside.autogram.json', 'double', [1], signal)).rejects.toThrow(
      /^cannot read the graph file \.\.\/outside\.autogram\.json: .*outside/,
    );
    await expect(agents.start('spy', '../outside.autogram.json', 'Hi', signal)).rejects.toThrow(
      /^cannot read the graph file \.\.\/outside\.autogram\.json: .*outside/,
    );
    expect(agents.list()).toEqual([]);
  });

  it('refuses a graph file with lint errors, naming the first', async () => {
    await workspace.write(
      'broken.autogram.json',
      JSON.stringify({
        name: 'broken',
        nodes: [{ name: 'start1', action: 'chat', transitions: ['nowhere'] }],
      }),
    );
    await expect(agents.start('broken', 'broken.autogram.json', 'Hi', signal)).rejects.toThrow(
      /^broken\.autogram\.json: the graph has 1 error\(s\), the first: start1: .*nowhere/,
    );
  });

  it('brings back the agents from a snapshot, and their conversations go on', async () => {
    await agents.start('pirate', 'pirate.autogram.json', 'My first secret is rum.', signal);
    await agents.start('waver', 'goodbye.autogram.json', 'Hi', signal);
    agents.remove('agent-2');
    const saved: unknown = JSON.parse(JSON.stringify(agents.snapshot()));
    agents.dispose();

    agents = await AutogramAgents.restore(saved, subAgentOptions(workspace, models));
    expect(agents.list().map((a) => a.key)).toEqual(['agent-1']);
    // The script answers this only when the earlier message is in the prompt.
    expect(await agents.message('agent-1', 'This is my second message.', signal)).toBe(
      'Arr, ye told me the first secret before.',
    );
    // Keys go on from where the run was.
    expect((await agents.start('waver', 'goodbye.autogram.json', 'Hi', signal)).key).toBe('agent-3');
  });

  it('refuses a snapshot that is not one', async () => {
    await expect(AutogramAgents.restore({ format: 'x' }, subAgentOptions(workspace, models))).rejects.toThrow(
      'not a sub-agents snapshot',
    );
  });

  it('designs an agent on the spot and saves it into the workspace', async () => {
    const bus = new EventBus();
    const events: AgentEvent[] = [];
    bus.on((event) => events.push(event));
    const designer = await createScriptedModels(await designerScript());
    agents = new AutogramAgents(subAgentOptions(workspace, designer, bus));

    const started = await agents.start('Quiz Master', 'a quiz bot', 'Yes, quiz me!', signal);
    expect(started.key).toBe('agent-1');
    expect(started.reply).toMatch(
      /^\[opening\] Welcome to the quiz!\n\[reply to your prompt\] What is 2 \+ 2\?/,
    );
    expect(agents.list()[0]).toMatchObject({ graph: 'quiz_master.autogram.json', task: 'a quiz bot' });
    const { file } = await loadGraphFile(join(workspace.root, 'quiz_master.autogram.json'));
    expect(file.name).toBe('quiz_master');
    // The designer's views and partial work stay out of the workspace.
    expect(await workspace.list('.')).not.toContain('quiz_master.dot');
    expect(events.some((e) => e.type === 'design.stage')).toBe(true);
    expect(events.some((e) => e.type === 'model.call' || e.type === 'reply')).toBe(true);

    // A second design of the same name does not overwrite the first.
    await agents.start('Quiz Master', 'a quiz bot', 'Yes', signal);
    expect(existsSync(join(workspace.root, 'quiz_master_2.autogram.json'))).toBe(true);
  });

  it('refuses to design when the run may not', async () => {
    agents = new AutogramAgents({ workspace, open: subAgentOptions(workspace, models).open });
    await expect(agents.start('helper', 'a helpful bot', 'Hi', signal)).rejects.toThrow(
      'this run may not design new agents',
    );
  });

  it('refuses a start past the most one run may have, deleted agents counted', async () => {
    for (let i = 1; i <= MAX_SUB_AGENTS; i++) {
      await agents.start(`waver ${i}`, 'goodbye.autogram.json', 'Hi', signal);
      agents.remove(`agent-${i}`);
    }
    await expect(agents.start('one more', 'goodbye.autogram.json', 'Hi', signal)).rejects.toThrow(
      `this run has started ${MAX_SUB_AGENTS} sub-agents, the most one run may`,
    );
  });

  it('starts nothing once the run is interrupted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(agents.start('pirate', 'pirate.autogram.json', 'Hi', controller.signal)).rejects.toThrow();
    expect(agents.list()).toEqual([]);
  });

  it('caps a long text with a note', () => {
    const text = capped('x'.repeat(MAX_REPLY_CHARS + 5), 'reply');
    expect(text).toBe(
      `${'x'.repeat(MAX_REPLY_CHARS)}\n[… the reply was ${MAX_REPLY_CHARS + 5} characters; the first ${MAX_REPLY_CHARS} are shown]`,
    );
  });
});

describe('the sub-agent commands', () => {
  const run = (command: typeof startAgent, args: Record<string, unknown>) =>
    command.run(command.args.parse(args), { agents, signal });

  it('start, message, list, call and delete through their declarations', async () => {
    expect(
      (await run(startAgent, { name: 'pirate', task: 'pirate.autogram.json', prompt: 'Hello' })).output,
    ).toBe(
      'Started agent-1 ("pirate") running pirate.autogram.json. It said:\n[opening] Ahoy!\n[reply to your prompt] Arr, one.',
    );
    expect((await run(messageAgent, { key: 'agent-1', message: 'Hi again' })).output).toBe(
      'agent-1 replied:\nArr, two.',
    );
    expect((await run(listAgents, {})).output).toBe(
      'agent-1: "pirate" running pirate.autogram.json, task: pirate.autogram.json',
    );
    expect(
      (await run(callAutogram, { graph: 'math.autogram.json', function: 'double', args: [4] })).output,
    ).toBe('double returned: 8');
    expect((await run(deleteAgent, { key: 'agent-1' })).output).toBe('Deleted agent-1.');
    await expect(run(deleteAgent, { key: 'agent-1' })).rejects.toThrow(
      'no sub-agent "agent-1"; none is running',
    );
    expect((await run(listAgents, {})).output).toBe('No sub-agents are running.');
  });

  it('declares the names, effects, needs and argument hints the goal loop offers', () => {
    const commands = [startAgent, messageAgent, listAgents, deleteAgent, callAutogram];
    expect(commands.map((c) => [c.name, c.effect, c.needs])).toEqual([
      ['start_agent', 'agent', ['agents']],
      ['message_agent', 'agent', ['agents']],
      ['list_agents', 'read', ['agents']],
      ['delete_agent', 'agent', ['agents']],
      ['call_autogram', 'agent', ['agents']],
    ]);
    expect(startAgent.title).toBe('Start agent');
    for (const command of commands)
      for (const field of Object.values(command.args.shape))
        expect((field as { description?: string }).description).toBeTruthy();
    expect(callAutogram.args.parse({ graph: 'g.json', function: 'f' })).toEqual({
      graph: 'g.json',
      function: 'f',
      args: [],
    });
  });
});

/**
 * The README's quiz-designer script, with answers for the designed quiz when it runs: its chatbot
 * answers only the designer, and its classifier nothing.
 */
async function designerScript(): Promise<string> {
  const example = fileURLToPath(new URL('../../examples/quiz-designer.script.json', import.meta.url));
  const script = JSON.parse(await readFile(example, 'utf8')) as { rules: unknown[] };
  script.rules.push(
    { role: 'chatbot', match: 'Ask the user one short general-knowledge question.', reply: 'What is 2 + 2?' },
    { role: 'chatbot', match: 'Greet the user and ask whether', reply: 'Welcome to the quiz!' },
    { role: 'classifier', reply: 'Yes' },
  );
  const path = join(dir, 'designer.script.json');
  await writeFile(path, JSON.stringify(script));
  return path;
}
