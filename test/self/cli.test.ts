import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStateFile } from '../../src/store/conversation-journal.js';
import { loadGraphFile } from '../../src/graph/load.js';
import { VersionedGraph } from '../../src/graph/versioned.js';
import { startOpenAIServer, type ChatRequestBody, type OpenAIServer } from '../support/openai-server.js';
import { runCli } from '../support/run-cli.js';

// Runs the built CLI (npx tsc -p . first), one process per turn, as a user resuming a conversation does.
// The history tests read the state the conversation test wrote: the tests of this file run in order.

const AGENT = 'meta/self-referential.autogram.json';
const DESIGNED = 13;

/** Per user message: the instruction the model designs, the names it offers (in order), and the reply. */
const TURNS = [
  {
    user: 'hello there',
    instruction: 'Respond to the user and greet them warmly.',
    names: ['Greet User', 'greet_user'],
    reply: 'Hello! Nice to meet you.',
  },
  {
    user: 'what is the weather like?',
    instruction: 'Respond to the user and tell them you cannot see the weather.',
    names: ['greet_user', 'weather_answer'],
    reply: 'I cannot see the weather from here, sorry.',
  },
  {
    user: 'tell me a joke',
    instruction: 'Respond to the user with a short joke.',
    names: ['tell_joke'],
    reply: 'Why did the node cross the graph?',
  },
];

/** The model, answering by the last message: a design prompt by the user text, the others by instruction. */
function answer(body: ChatRequestBody): string {
  const last = body.messages.at(-1)?.content ?? '';
  if (last.includes('write an instruction for another language model'))
    return TURNS.find((t) => last.includes(`User: ${t.user}`))?.instruction ?? 'no design';
  const turn = TURNS.find((t) => last.includes(t.instruction));
  if (!turn) return 'unexpected prompt';
  if (last.includes('The last name was invalid')) return turn.names.at(-1)!;
  if (last.includes('come up with a short name')) return turn.names[0]!;
  return turn.reply;
}

let server: OpenAIServer;
let dir: string;
let statePath: string;

beforeAll(async () => {
  server = await startOpenAIServer({ reply: answer });
  dir = await mkdtemp(join(tmpdir(), 'meta-agent-self-'));
  statePath = join(dir, 'self.state.json');
});

afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

function chat(input: string, ...flags: string[]) {
  return runCli(
    [
      'chat',
      AGENT,
      '--self-referential',
      '--state',
      statePath,
      '--base-url',
      server.url,
      '--model',
      'gpt-4o-mini',
      ...flags,
    ],
    { input },
  );
}

async function savedGraph(): Promise<VersionedGraph> {
  const state = await loadStateFile(statePath);
  return VersionedGraph.fromJSON(state?.graph);
}

describe('meta-agent chat meta/self-referential.autogram.json --self-referential --state FILE', () => {
  it('grows the graph by one node per turn, each turn in a new process that resumes the nodes the agent wrote', async () => {
    const first = await chat(`${TURNS[0]!.user}\n`);
    expect(first.stderr).toBe('');
    expect(first.stdout).toBe(`Hi there, what can I help you with?\n${TURNS[0]!.reply}\n`);
    expect(
      (await savedGraph())
        .nodes()
        .map((n) => n.name)
        .slice(DESIGNED),
    ).toEqual(['greet_user']);

    // "greet_user" is offered again: the resumed graph has it, so the agent asks for another name.
    const second = await chat(`${TURNS[1]!.user}\n`);
    expect(second).toMatchObject({ code: 0, stderr: '', stdout: `${TURNS[1]!.reply}\n` });
    expect(
      (await savedGraph())
        .nodes()
        .map((n) => n.name)
        .slice(DESIGNED),
    ).toEqual(['greet_user', 'weather_answer']);

    // With --json, the edit reaches the event stream the moment it applies.
    const third = await chat(`${TURNS[2]!.user}\n`, '--json');
    expect(third).toMatchObject({ code: 0, stderr: '' });
    const events = third.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(events.filter((e) => e.type === 'graph.edited')).toEqual([
      {
        type: 'graph.edited',
        version: 3,
        by: '_add_new_node_node8',
        op: 'add',
        nodes: ['tell_joke'],
        totalNodes: DESIGNED + 3,
      },
    ]);
    expect(events.find((e) => e.type === 'reply')).toMatchObject({
      node: 'tell_joke',
      text: TURNS[2]!.reply,
    });

    const graph = await savedGraph();
    expect(graph.version).toBe(3);
    expect(graph.get('tell_joke')).toMatchObject({ action: 'chat', instruction: TURNS[2]!.instruction });
  });

  it('lists the versions the agent made with meta-agent history', async () => {
    const { code, stdout, stderr } = await runCli(['history', statePath]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toBe(`self-referential (${statePath}): version 3, ${DESIGNED + 3} nodes`);
    expect(lines.slice(2)).toEqual([
      expect.stringMatching(/^\s*0\s+-\s+-\s+loaded\s+\(13 nodes\)$/),
      expect.stringMatching(/^\s*1\s+\d{4}-\d\d-\d\dT\S+Z\s+_add_new_node_node8\s+add\s+greet_user$/),
      expect.stringMatching(/^\s*2\s+\S+\s+_add_new_node_node8\s+add\s+weather_answer$/),
      expect.stringMatching(/^\s*3\s+\S+\s+_add_new_node_node8\s+add\s+tell_joke$/),
    ]);
  });

  it('shows the nodes added between two versions with --diff', async () => {
    const { code, stdout } = await runCli(['history', statePath, '--diff', '1', '3']);
    expect(code).toBe(0);
    expect(stdout).toBe('from version 1 to version 3:\n  + weather_answer  added\n  + tell_joke  added\n');
  });

  it('writes the graph as it was at a version with --revert, as a valid graph file', async () => {
    const out = join(dir, 'v1.autogram.json');
    const { code, stderr } = await runCli(['history', statePath, '--revert', '1', '-o', out]);
    expect(code).toBe(0);
    expect(stderr).toContain(`wrote ${out}: the graph at version 1 of 3`);
    const { file } = await loadGraphFile(out);
    expect(file.nodes.map((n) => n.name).slice(DESIGNED)).toEqual(['greet_user']);

    const validate = await runCli(['validate', out]);
    expect(validate.stdout).toContain(`${out}: 14 nodes, 0 errors`);
  });
});
