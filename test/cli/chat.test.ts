import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  closedUrl,
  startOpenAIServer,
  type ChatRequestBody,
  type OpenAIServer,
} from '../support/openai-server.js';
import { loadStateFile } from '../../src/store/conversation-journal.js';
import type { ConversationState } from '../../src/engine/state.js';
import { runCli } from '../support/run-cli.js';

const GREETER = 'test/fixtures/cli/greeter.autogram.json';
const SPIN = 'test/fixtures/cli/spin.autogram.json';
const TALLY = 'test/fixtures/engine/tally.autogram.json';
const GROWER = 'test/fixtures/cli/grower.autogram.json';
const LOGGING = 'test/fixtures/engine/logging.autogram.json';

/** The classifier's calls are limited to one token (it answers A: happy); the chatbot answers by instruction. */
function greeterAnswer(body: ChatRequestBody): string {
  if (body.max_tokens === 1) return 'A';
  const prompt = body.messages.at(-1)?.content ?? '';
  if (prompt.includes('ask for their name')) return 'Hello! What is your name?';
  if (prompt.includes('how they feel')) return 'How are you today, Ann?';
  if (prompt.includes('glad to hear it')) return 'Glad to hear it. Goodbye!';
  return 'unexpected prompt';
}

let server: OpenAIServer | undefined;
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'meta-agent-chat-'));
});

afterEach(async () => {
  await server?.close();
  server = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** Runs `chat` against the loopback server. */
async function chat(args: string[], input: string) {
  server ??= await startOpenAIServer({ reply: greeterAnswer });
  return runCli(['chat', ...args, '--base-url', server.url, '--model', 'gpt-4o-mini'], { input });
}

/** The state a `--state` file ends at, read as the next `chat` would read it. */
async function savedState(path: string): Promise<ConversationState> {
  const state = await loadStateFile(path);
  if (!state) throw new Error(`no state saved in ${path}`);
  return state;
}

describe('meta-agent chat with piped input', () => {
  it('prints each agent reply on its own line, in order, the agent speaking first', async () => {
    const result = await chat([GREETER], 'I am Ann\n\nGreat, thanks\nbye\n');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      'Hello! What is your name?\nHow are you today, Ann?\nGlad to hear it. Goodbye!\n',
    );
    // Three chatbot turns and one classification; the blank line was skipped, not sent as a reply.
    const requests = server!.chatRequests();
    expect(requests.map((r) => (r.max_tokens === 1 ? 'classifier' : 'chatbot'))).toEqual([
      'chatbot',
      'chatbot',
      'classifier',
      'chatbot',
    ]);
    expect(requests[1]?.messages.at(-1)?.content).toContain('I am Ann');
  });

  it('applies --start and --agent-name to the run', async () => {
    const result = await chat([GREETER, '--start', 'mood', '--agent-name', 'Max'], '');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('How are you today, Ann?\n');
    expect(server!.chatRequests()[0]?.messages.at(-1)?.content).toContain(
      'Instruction for Max: Ask the user how they feel today',
    );
  });

  it('resumes a --state file in a second process where the first stopped', async () => {
    const state = join(dir, 'greeter.state.json');
    const first = await chat([GREETER, '--state', state], 'I am Ann\n');
    expect(first.code).toBe(0);
    expect(first.stdout).toBe('Hello! What is your name?\nHow are you today, Ann?\n');
    expect(await savedState(state)).toMatchObject({ graphName: 'greeter', current: 'mood', ended: false });

    const second = await chat([GREETER, '--state', state], 'Great, thanks\n');
    expect(second.code).toBe(0);
    // No second opening: the conversation goes on from the question the first process asked.
    expect(second.stdout).toBe('Glad to hear it. Goodbye!\n');
    const farewell = server!
      .chatRequests()
      .at(-1)
      ?.messages.map((m) => m.content)
      .join('\n');
    expect(farewell).toContain('I am Ann');
    // The farewell node can only quit: the conversation ended with it.
    expect(await savedState(state)).toMatchObject({ current: 'happy', ended: true });
    // Saved through a temporary file that was renamed: nothing else is left in the folder.
    expect(await readdir(dir)).toEqual(['greeter.state.json']);

    const after = await chat([GREETER, '--state', state], 'hello?\n');
    expect(after.code).toBe(2);
    expect(after.stderr).toContain(`error: the conversation saved in ${state} has ended`);
  });

  it('resumes a self-edited graph from the state file, nodes the agent added included', async () => {
    const state = join(dir, 'grower.state.json');
    const first = await chat([GROWER, '--self-referential', '--state', state], 'hi\n');
    expect(first.stderr).toBe('');
    expect(first.stdout).toBe('Say anything.\nI grew a node.\n');
    const saved = await savedState(state);
    expect(saved).toMatchObject({ current: 'grown' });
    expect(saved.graph).toBeDefined();

    // The node the agent wrote is only in the state; the mode stays on for the edited graph.
    const second = await chat([GROWER, '--state', state], 'bye\n');
    expect(second).toMatchObject({ code: 0, stdout: 'That is all.\n', stderr: '' });
    const { graph } = saved as { graph: { base: { nodes: unknown }; edits: unknown } };
    expect(await savedState(state)).toMatchObject({
      ended: true,
      graph: { base: { nodes: graph.base.nodes }, edits: graph.edits },
    });
  });

  it('names self-referential mode when code uses self without it', async () => {
    const result = await chat([GROWER], 'hi\n');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error: node "grow": .*`self` exists only in self-referential mode/);
  });

  it('refuses a state saved for another graph, or a file that is no state', async () => {
    const state = join(dir, 'tally.state.json');
    expect((await chat([TALLY, '--state', state], '')).stdout).toBe('Message 0?\n');
    const other = await chat([GREETER, '--state', state], 'hi\n');
    expect(other.code).toBe(2);
    expect(other.stderr).toBe(
      `error: ${state} holds a conversation with the graph "tally", not "greeter"\n` +
        `hint: pass another --state file, or delete ${state} to start over\n`,
    );
    expect(other.stdout).toBe('');

    const notState = join(dir, 'notes.json');
    await writeFile(notState, '{"hello": 1}');
    const bad = await chat([GREETER, '--state', notState], 'hi\n');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: .*notes\.json is not a meta-agent conversation state/);
  });

  it('writes the event stream as JSON lines with --json', async () => {
    const result = await chat([GREETER, '--json'], 'I am Ann\n');
    expect(result.code).toBe(0);
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; text?: string });
    const types = new Set(events.map((e) => e.type));
    for (const type of ['run.started', 'node.entered', 'model.call', 'transition', 'user', 'reply'])
      expect(types).toContain(type);
    expect(events.filter((e) => e.type === 'run.started')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'reply').map((e) => e.text)).toEqual([
      'Hello! What is your name?',
      'How are you today, Ann?',
    ]);
    expect(events.find((e) => e.type === 'user')?.text).toBe('I am Ann');
  });

  it("prints code nodes' console output to stderr, or as code.log events with --json", async () => {
    const lines = await chat([LOGGING], 'hi\nagain\n');
    expect(lines).toMatchObject({ code: 0, stdout: 'Visit 1.\nVisit 2.\nVisit 3.\n' });
    expect(lines.stderr).toBe('[start1] first visit\n[count] visit 2\n[count] visit 3\n');
    const json = await chat([LOGGING, '--json'], 'hi\n');
    const logs = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string })
      .filter((event) => event.type === 'code.log');
    expect(logs).toEqual([
      { type: 'code.log', node: 'start1', text: 'first visit' },
      { type: 'code.log', node: 'count', text: 'visit 2' },
    ]);
    expect(json.stderr).toBe('');
  });

  it('appends every event to the --trace file as JSON lines', async () => {
    const trace = join(dir, 'run.jsonl');
    const result = await chat([TALLY, '--trace', trace], 'one\n');
    expect(result.stdout).toBe('Message 0?\nMessage 1?\n');
    const lines = (await readFile(trace, 'utf8')).trim().split('\n');
    const events = lines.map((line) => JSON.parse(line) as { time: string; type: string; text?: string });
    expect(events.every((e) => !Number.isNaN(Date.parse(e.time)))).toBe(true);
    expect(events.filter((e) => e.type === 'reply').map((e) => e.text)).toEqual(['Message 0?', 'Message 1?']);
    expect(events.some((e) => e.type === 'variable.set')).toBe(true);
  });

  it('stops a code node that loops forever with one line naming the node, keeping the last good state', async () => {
    const state = join(dir, 'spin.state.json');
    const result = await chat([SPIN, '--state', state], 'go\ngo\ngo\n');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('Say go.\nTurn 1. Say go again.\n');
    const [error, ...rest] = result.stderr.trim().split('\n');
    expect(error).toBe('error: node "check.b": code ran longer than 200 ms (config.sandbox.timeoutMs)');
    expect(rest.every((line) => line.startsWith('hint: '))).toBe(true);
    const saved = await savedState(state);
    expect(saved).toMatchObject({ current: 'check.a', ended: false });
    expect(saved.stack).toMatchObject([{ variables: { turns: 1 } }]);
  });

  it("ends when the agent's reply can only be followed by quit, without waiting for another line", async () => {
    const farewell = join(dir, 'farewell.autogram.json');
    await writeFile(
      farewell,
      JSON.stringify({
        nodes: [
          { name: 'start1', action: 'chat_exact', instruction: 'Hello! Done already?', transitions: ['bye'] },
          { name: 'bye', action: 'chat_exact', instruction: 'Goodbye!', transitions: ['quit'] },
        ],
      }),
    );
    const state = join(dir, 'farewell.state.json');
    const result = await runCli(['chat', farewell, '--state', state], {
      input: 'yes\n',
      keepStdinOpen: true,
    });
    expect(result).toMatchObject({ code: 0, stdout: 'Hello! Done already?\nGoodbye!\n' });
    expect(await savedState(state)).toMatchObject({ ended: true });

    // An interjection could still take the next message elsewhere, so that chat waits for it.
    const interjected = join(dir, 'interjected.autogram.json');
    await writeFile(
      interjected,
      JSON.stringify({
        nodes: [
          { name: 'start1', action: 'chat_exact', instruction: 'Goodbye!', transitions: ['quit'] },
          {
            name: 'help',
            action: 'chat_exact',
            instruction: 'Here is help.',
            conditionInterjection: 'The user asks for help.',
            transitions: ['quit'],
          },
        ],
      }),
    );
    const script = join(dir, 'no-help.json');
    await writeFile(script, JSON.stringify({ rules: [{ role: 'classifier', reply: 'B' }] }));
    const waited = await chat([interjected, '--provider', 'scripted', '--script', script], 'thanks\n');
    expect(waited).toMatchObject({ code: 0, stdout: 'Goodbye!\n' });
  });

  it('stops a graph that loops without a reply, and says which config field lets it run longer', async () => {
    const looping = join(dir, 'looping.autogram.json');
    await writeFile(
      looping,
      JSON.stringify({
        config: { runLimits: { maxSteps: 30 } },
        nodes: [
          { name: 'start1', action: 'chat_exact', instruction: 'Ready?', transitions: ['a'] },
          { name: 'a', action: 'transition', transitions: ['b'] },
          { name: 'b', action: 'transition', transitions: ['a'] },
        ],
      }),
    );
    const result = await chat([looping], 'yes\n');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('Ready?\n');
    expect(result.stderr).toBe(
      'error: node "b": stopped after 30 steps without a reply; the graph seems to loop (next node: "a")\n' +
        'hint: make the loop reach a chat node, a return or quit; if the graph is meant to run this long, ' +
        "raise config.runLimits.maxSteps in the graph file, or in a spreadsheet's --format json export\n",
    );
  });

  it('marks scripted answers on stderr and keeps stdout to the replies', async () => {
    const script = join(dir, 'rules.json');
    await writeFile(script, JSON.stringify({ rules: [{ role: 'chatbot', reply: 'Hi from the script.' }] }));
    const result = await runCli(['chat', GREETER, '--provider', 'scripted', '--script', script]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('Hi from the script.\n');
    expect(result.stderr).toMatch(/^\[scripted\] /);
  });
});

describe('meta-agent chat with bad input', () => {
  it('names a missing graph file in one line, exit 2', async () => {
    const result = await runCli(['chat', 'missing.autogram.json']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('error: missing.autogram.json: no such file\n');
  });

  it('refuses an unknown --start node, suggesting the closest', async () => {
    const result = await runCli(['chat', GREETER, '--start', 'mod']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: --start: the graph has no node "mod"; did you mean "mood"\?\n/);
  });

  it('refuses an unknown flag with exit 2', async () => {
    const result = await runCli(['chat', GREETER, '--bogus']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("unknown option '--bogus'");
  });

  it('says there is no model server and the embedded model cannot be fetched, naming the node that needed one, without a stack trace', async () => {
    const result = await runCli(['chat', GREETER], {
      input: 'hi\n',
      env: { META_AGENT_PROBE_URLS: await closedUrl() },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^error: node "start1": cannot download hf:\S+: 127\.0\.0\.1:9 cannot be reached/,
    );
    expect(result.stderr).not.toMatch(/\bat .*\.js:\d+/);
  });

  it('runs a graph that needs no model without any model server', async () => {
    const result = await runCli(['chat', TALLY], {
      input: 'a\nb\nc\nd\n',
      env: { META_AGENT_PROBE_URLS: await closedUrl() },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('Message 0?\nMessage 1?\nMessage 2?\nGot 3 messages. Bye.\n');
  });
});
