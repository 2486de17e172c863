/**
 * Designed conversations end: at the goodbye the model draws, at one the designer adds when it draws
 * none, and from loops it drew with no way out. A chat with a designed agent stops at its goodbye.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { endingNodes, withEnding } from '../../meta/ending.js';
import type { DotDraft } from '../../meta/dot-problems.js';
import { nodeBriefs, nodeFieldsMessages } from '../../meta/node-fields.js';
import { lintGraph } from '../../src/aipl/lint.js';
import { loadGraphFile } from '../../src/graph/load.js';
import type { GraphFile } from '../../src/graph/schema.js';
import { designWith } from '../fixtures/design/design-run.js';
import { pathToQuit } from '../fixtures/design/ending.js';
import { cooperativeDesigner, promptKind } from '../fixtures/design/replies.js';
import type { ChatAnswer, ChatRequestBody } from '../support/openai-server.js';
import { scriptedExample } from '../support/examples.js';
import { runCli } from '../support/run-cli.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'designer-ending-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A draft of labelled turns and `from -> to` edges, each labelled with its ends. */
function draftOf(labels: Record<string, string>, edges: string[]): DotDraft {
  return {
    nodes: Object.entries(labels).map(([id, label]) => ({ id, label })),
    edges: edges.map((edge) => {
      const [from, to] = edge.split(' -> ') as [string, string];
      return { from, to, label: edge };
    }),
    start: 'start',
  };
}

/** A menu the user can only go round: no goodbye, and no turn without a way on. */
const MENU = draftOf(
  {
    start: 'Greet the user',
    menu: 'Offer fractions or decimals',
    fractions: 'Teach fractions',
    decimals: 'Teach decimals',
  },
  ['start -> menu', 'menu -> fractions', 'menu -> decimals', 'fractions -> menu', 'decimals -> menu'],
);

/** The same as a DOT answer. */
function dotAnswerOf(draft: DotDraft): string {
  const lines = [
    ...draft.nodes.map((n) => `  ${n.id} [label="${n.label}"];`),
    ...draft.edges.map((e) => `  ${e.from} -> ${e.to} [label="${e.label}"];`),
  ];
  return `\`\`\`dot\ndigraph tutor {\n${lines.join('\n')}\n}\n\`\`\``;
}

/** The cooperative designer, drawing `draft` instead of its own graph. */
function drawing(draft: DotDraft): (body: ChatRequestBody) => ChatAnswer {
  const base = cooperativeDesigner(4);
  return (body) => (['dot', 'redraw'].includes(promptKind(body)) ? dotAnswerOf(draft) : base(body));
}

async function designedGraph(reply: (body: ChatRequestBody) => ChatAnswer): Promise<GraphFile> {
  const outcome = await designWith(reply, dir);
  if (!outcome.ok) throw new Error(`the design failed at ${outcome.stage}: ${outcome.reason}`);
  return (await loadGraphFile(outcome.saved.graph)).file;
}

describe('the end of a drawn conversation', () => {
  it('is a turn without edges out that is named goodbye or says goodbye; one with edges out goes on', () => {
    const draft = draftOf(
      {
        start: 'Greet',
        goodbye: 'Part',
        farewell: 'Wish the user well and say bye',
        open: 'Chat',
        end: 'Leave',
      },
      ['start -> goodbye', 'start -> farewell', 'start -> open', 'start -> end', 'end -> start'],
    );
    expect(endingNodes(draft).map((n) => n.id)).toEqual(['goodbye', 'farewell']);
  });

  it('is left as drawn when every turn can reach it', () => {
    const draft = draftOf({ start: 'Offer a quiz', quiz: 'Ask a question', goodbye: 'Say goodbye' }, [
      'start -> quiz',
      'quiz -> start',
      'start -> goodbye',
    ]);
    expect(withEnding(draft)).toEqual({ draft, closing: 'goodbye', addedNode: false, addedEdges: 0 });
  });

  it('is a goodbye turn the designer adds when the model drew none', () => {
    const draft = draftOf({ start: 'Greet the user', teach: 'Teach the lesson' }, ['start -> teach']);
    const { draft: ended, addedNode } = withEnding(draft);
    expect(addedNode).toBe(true);
    expect(ended.nodes.at(-1)).toEqual({ id: 'goodbye', label: 'Thank the user and say goodbye' });
    expect(ended.edges).toEqual(draft.edges);
  });

  it('is reached from every turn of a loop the conversation could never leave, and from no other turn', () => {
    const { draft, addedEdges } = withEnding(MENU);
    expect(addedEdges).toBe(3);
    expect(draft.edges.filter((e) => e.to === 'goodbye')).toEqual(
      ['menu', 'fractions', 'decimals'].map((from) => ({
        from,
        to: 'goodbye',
        label: 'The user is done and says goodbye',
      })),
    );
  });
});

describe('the goodbye turn', () => {
  it('is written as the turn after which the conversation ends', () => {
    const draft = draftOf({ start: 'Greet the user', goodbye: 'Say goodbye' }, ['start -> goodbye']);
    const [, goodbye] = nodeBriefs(draft);
    expect(goodbye!.ending).toBe(true);
    const prompt = nodeFieldsMessages(goodbye!, { description: 'a tutor', outline: '1. Greet.' })[1]!.content;
    expect(prompt).toContain('The conversation ends after this turn: the agent says goodbye.');
    expect(prompt).not.toContain('the conversation simply goes on');
  });
});

describe('designed graphs end', () => {
  it('at the goodbye the model draws', async () => {
    const file = await designedGraph(cooperativeDesigner(5));
    expect(pathToQuit(file)).toEqual(['start', 'step_2', 'step_3', 'goodbye', 'quit']);
    expect(lintGraph(file)).toEqual([]);
  });

  it('when the model forgets the goodbye: the turn left open asks whether the user is done, and leads to one', async () => {
    const file = await designedGraph(
      drawing(draftOf({ start: 'Greet the user', teach: 'Teach the lesson' }, ['start -> teach'])),
    );
    expect(pathToQuit(file)).toEqual(['start', 'teach', 'continue_conversation', 'goodbye', 'quit']);
    expect(file.nodes.find((n) => n.name === 'continue_conversation')).toMatchObject({
      transitions: ['goodbye', 'continue_conversation'],
      transitionChoices: ['yes', 'no'],
    });
    expect(lintGraph(file)).toEqual([]);
  });

  it('when the model draws only loops: each turn of the loop offers a way out', async () => {
    const file = await designedGraph(drawing(MENU));
    expect(pathToQuit(file)).toEqual(['start', 'menu', 'goodbye', 'quit']);
    // The model wrote the question and choices of each turn with the way out among them.
    expect(file.nodes.find((n) => n.name === 'fractions')).toMatchObject({
      transitions: ['menu', 'goodbye'],
      transitionChoices: ['reply way 1 at fractions', 'reply way 2 at fractions'],
    });
    expect(lintGraph(file)).toEqual([]);
  });

  it('when designed from the scripted quiz example, as the README does', async () => {
    const design = await runCli(['design', 'a quiz bot', ...scriptedExample('quiz-designer')], { cwd: dir });
    expect(design.code).toBe(0);
    const { file } = await loadGraphFile(join(dir, 'quiz_bot.autogram.json'));
    expect(pathToQuit(file)).toEqual(['start', 'goodbye', 'quit']);
  });
});

describe('a chat with a designed agent', () => {
  it('ends at the goodbye: exit 0, the goodbye said last, and nothing the user types after it is answered', async () => {
    expect(
      (await runCli(['design', 'a quiz bot', ...scriptedExample('quiz-designer')], { cwd: dir })).code,
    ).toBe(0);
    const chat = (input: string) =>
      runCli(
        ['chat', 'quiz_bot.autogram.json', '--state', 'quiz.state.json', ...scriptedExample('quiz-chat')],
        {
          cwd: dir,
          input,
        },
      );

    const ended = await chat('yes please\nMars\nno thanks, goodbye\nare you still there?\nhello?\n');
    expect(ended).toMatchObject({ code: 0 });
    expect(ended.stdout).toBe(
      [
        'Hello! Would you like a short quiz?',
        'Which planet is known as the Red Planet?',
        'Right, Mars! Fancy another question?',
        'Goodbye, and thanks for stopping by!',
        '',
      ].join('\n'),
    );
    // The conversation saved with it has ended too: it cannot be taken up again.
    const after = await chat('hello again\n');
    expect(after.code).toBe(2);
    expect(after.stderr).toContain('has ended (a quit transition was taken)');
  });
});
