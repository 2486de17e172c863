import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStateFile } from '../../src/store/conversation-journal.js';
import { VersionedGraph } from '../../src/graph/versioned.js';
import { splitColumns } from '../../src/tui/layout-size.js';
import { startOpenAIServer, type ChatRequestBody, type OpenAIServer } from '../support/openai-server.js';
import { chatCommand, checkCanRun, cliEnv, root, tmuxInstalled, tmuxSkipNote } from './chat-cli.js';
import { TmuxSession } from './tmux.js';

// The real built CLI (`npm run build` first) in a real terminal: tmux runs `meta-agent chat` on the
// Appendix H agent in self-referential mode, keys go in with send-keys and the screen is read back.

const artifact = join(root, 'test-artifacts/tui-tmux.txt');
const AGENT = 'meta/self-referential.autogram.json';
const SIZE = { columns: 160, rows: 48 };

/** Per reply typed: the instruction the model designs, the node name it picks, and the new node's reply. */
const TURNS = [
  {
    user: 'hello there',
    instruction: 'Respond to the user and greet them warmly.',
    name: 'greet_user',
    reply: 'Hello! Nice to meet you.',
  },
  {
    user: 'what is the weather like?',
    instruction: 'Respond to the user and tell them you cannot see the weather.',
    name: 'weather_answer',
    reply: 'I cannot see the weather from here, sorry.',
  },
  {
    user: 'tell me a joke',
    instruction: 'Respond to the user with a short joke.',
    name: 'tell_joke',
    reply: 'Why did the node cross the graph?',
  },
];

/** The model, answering by the last message: the design prompt by the user's text, the rest by instruction. */
function answer(body: ChatRequestBody): string {
  const last = body.messages.at(-1)?.content ?? '';
  if (last.includes('write an instruction for another language model'))
    return TURNS.find((t) => last.includes(`User: ${t.user}`))?.instruction ?? 'no design';
  const turn = TURNS.find((t) => last.includes(t.instruction));
  if (!turn) return 'unexpected prompt';
  if (last.includes('come up with a short name')) return turn.name;
  return turn.reply;
}

/** The `nodes: N` of the status bar; undefined until the view has drawn it. */
function nodeCount(screen: string): number | undefined {
  const match = /· nodes: (\d+) ·/.exec(screen);
  return match ? Number(match[1]) : undefined;
}

/**
 * The graph panel's lines: from its title down to the live turn, left column only (the inspector
 * beside it and the transcript above also name nodes).
 */
function graphPanel(screen: string): string[] {
  const lines = screen.split('\n');
  const top = lines.findIndex((line) => line.trimStart().startsWith('Graph self-referential'));
  const bottom = lines.findIndex((line, i) => i > top && line.startsWith('· waiting for your reply'));
  if (top < 0 || bottom < 0) throw new Error(`no graph panel on the screen:\n${screen}`);
  return lines.slice(top, bottom).map((line) => line.slice(0, splitColumns(SIZE.columns).left));
}

/** The panel's row of a node the agent added: `▶` current, `•` visited, then `+` when the last edit added it. */
function addedRow(panel: string[], name: string): string | undefined {
  return panel.find((line) => line.includes(` ${name} chat  → dynamic_node`));
}

describe.skipIf(!tmuxInstalled)(`meta-agent chat in a terminal (tmux)${tmuxSkipNote}`, () => {
  let server: OpenAIServer;
  let dir: string;
  let tmux: TmuxSession | undefined;

  beforeAll(async () => {
    checkCanRun();
    server = await startOpenAIServer({ reply: answer });
    dir = await mkdtemp(join(tmpdir(), 'meta-agent-tui-'));
  });

  afterAll(async () => {
    await tmux?.kill();
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('grows the graph by one node per typed reply, shown in the status bar and the graph panel', async () => {
    const statePath = join(dir, 'state.json');
    tmux = await TmuxSession.start({
      command: chatCommand([
        AGENT,
        '--self-referential',
        '--base-url',
        server.url,
        '--model',
        'test-model',
        '--state',
        statePath,
      ]),
      cwd: root,
      env: cliEnv(),
      size: SIZE,
    });

    // The agent speaks first; the reply line opens once its opening is done.
    const opening = await tmux.waitFor(
      (screen) => screen.includes('Hi there, what can I help you with?') && screen.includes('› █'),
      { what: 'the opening line and an open reply line' },
    );
    // The opening makes no model call: the model's name comes from the command line.
    expect(opening).toMatch(/^test-model · nodes: 13 · v0 · /m);
    const before = nodeCount(opening)!;

    for (const [i, turn] of TURNS.entries()) {
      await tmux.type(turn.user);
      await tmux.waitFor((screen) => screen.includes(`› ${turn.user}█`), {
        what: `"${turn.user}" in the reply line`,
      });
      await tmux.press('Enter');
      // The reply stays in view above the panels, and the reply line opens again.
      const screen = await tmux.waitFor(
        (text) => text.includes(`Agent › ${turn.reply}`) && text.includes('› █'),
        { what: `the reply to "${turn.user}"` },
      );
      expect(nodeCount(screen)).toBe(before + i + 1);
      const panel = graphPanel(screen);
      expect(panel[0]).toContain(`edits v${i + 1} by _add_new_node_node8: +${turn.name}`);
      // The node this turn added is the current one, marked as added.
      expect(addedRow(panel, turn.name)).toMatch(new RegExp(`^.▶\\+ ${turn.name} `));
    }

    const final = await tmux.capture();
    await mkdir(dirname(artifact), { recursive: true });
    await writeFile(artifact, final);
    expect(nodeCount(final)).toBe(before + 3);
    const panel = graphPanel(final);
    for (const turn of TURNS) expect(addedRow(panel, turn.name)).toBeDefined();

    // A narrower terminal rewraps the screen. Ink draws the view at the new width at once, below what
    // is left of the old one (which may scroll the last reply out of sight for a moment); then the
    // screen settles to one view (the inspector's title left of where the old split put it), with the
    // last reply above it once.
    const narrow = { columns: 110, rows: SIZE.rows };
    const oldSplit = splitColumns(SIZE.columns).left;
    const lines = (screen: string, text: string) => screen.split('\n').filter((line) => line.includes(text));
    await tmux.resize(narrow);
    await tmux.waitFor(
      (screen) => {
        const titles = lines(screen, 'Graph self-referential');
        const inspector = titles.length === 1 ? titles[0]!.indexOf('Node tell_joke') : -1;
        return (
          inspector >= 0 &&
          inspector < oldSplit &&
          lines(screen, '· nodes: ').length === 1 &&
          lines(screen, `Agent › ${TURNS[2]!.reply}`).length === 1
        );
      },
      { what: `one view drawn at ${narrow.columns} columns, the last reply above it once` },
    );

    // Ctrl+C interrupts from the reply line (q would be typed into it), with exit 130 as in a pipe;
    // the state file has every reply.
    await tmux.press('C-c');
    expect(await tmux.waitForExit()).toBe(130);
    const state = await loadStateFile(statePath);
    const graph = VersionedGraph.fromJSON(state?.graph);
    expect(graph.history().map((record) => [record.version, record.op, record.name])).toEqual(
      TURNS.map((turn, i) => [i + 1, 'add', turn.name]),
    );
    expect(graph.nodes()).toHaveLength(before + 3);
  });
});
