/** Small graphs that exercise every way an exporter draws a transition. */
import { fileURLToPath } from 'node:url';
import { graphFileSchema, type GraphFile, type GraphFileInput } from '../../src/graph/schema.js';

/** The AutoGRAMS example spreadsheets kept as test fixtures. */
export const FRACTION_AGENT_CSV = fileURLToPath(
  new URL('../fixtures/graphs/fraction_agent.csv', import.meta.url),
);
export const SIMPLE_EXAMPLE_CSV = fileURLToPath(
  new URL('../fixtures/graphs/simple_example.csv', import.meta.url),
);
/** The designer meta-autogram, the largest graph in the repository. */
export const DESIGNER_GRAPH = fileURLToPath(new URL('../../meta/designer.autogram.json', import.meta.url));

function graph(input: GraphFileInput): GraphFile {
  return graphFileSchema.parse(input);
}

/** A question with choices, a function call and its return, a category cluster, an interjection, quit. */
export const quizGraph: GraphFile = graph({
  name: 'quiz',
  nodes: [
    {
      name: 'greet',
      action: 'chat_exact',
      instruction: 'Hi! Shall we start the quiz?',
      transitions: ['ask_topic', 'goodbye'],
      transitionQuestion: 'Does the user want to start?',
      transitionChoices: ['yes', 'no'],
      userInstructions: ['say yes', 'say no'],
    },
    {
      name: 'ask_topic',
      action: 'function',
      instruction: 'question = write_question(topic)',
      transitions: ['goodbye'],
      category: 'quiz',
    },
    {
      name: 'write_question(topic)',
      action: 'thought',
      instruction: 'Write one short question about $topic.',
      transitions: ['return'],
      category: 'quiz',
    },
    {
      name: 'goodbye',
      action: 'chat',
      instruction: 'Say goodbye.',
      transitions: ['quit'],
    },
    {
      name: 'rude',
      action: 'chat',
      instruction: 'Ask the user politely to keep it civil.',
      conditionInterjection: 'The user is being rude',
      transitions: ['greet'],
    },
  ],
});

/** A wildcard group chosen by boolean conditions, `u.n` visits and a `$var` transition. */
export const branchGraph: GraphFile = graph({
  name: 'branch',
  nodes: [
    { name: 'score', action: 'code', instruction: 'points = 7', transitions: ['check.*'] },
    {
      name: 'check.b',
      action: 'chat',
      instruction: 'Good.',
      booleanCondition: 'points > 5',
      transitions: ['u.n'],
    },
    {
      name: 'check.a',
      action: 'chat',
      instruction: 'Great!',
      booleanCondition: 'points > 8',
      transitions: ['u.n'],
    },
    { name: 'check.c', action: 'chat', instruction: 'Keep trying.', transitions: ['$next'] },
    { name: 'u.1', action: 'chat', instruction: 'Unit one.', transitions: ['score'] },
    { name: 'u.2', action: 'chat', instruction: 'Unit two.', transitions: ['return done'] },
  ],
});

/** Names and texts that need escaping in every output language. */
export const awkwardGraph: GraphFile = graph({
  name: 'say "hi" <now>',
  nodes: [
    {
      name: 'start1',
      action: 'chat',
      instruction: 'Say "hello" & <wave>\nthen ask: done? #1; `x` | y',
      transitions: ['end', 'a\\b', 'nowhere'],
      transitionQuestion: 'Is the user "done"?',
      transitionChoices: ['yes | done', 'no <really>', 'maybe'],
      category: 'intro "part"',
    },
    { name: 'end', action: 'chat', instruction: 'Bye.', transitions: ['quit'] },
    { name: 'a\\b', action: 'thought', instruction: 'x \\= 1', transitions: ['end'] },
  ],
});

/** Control characters in names, a category and text: NUL, BEL, DEL and a C1 character. */
export const controlGraph: GraphFile = graph({
  name: 'bad\u0007name',
  nodes: [
    { name: 'start1', action: 'chat', transitions: ['a\u0000b'], category: 'c\u0000' },
    {
      name: 'a\u0000b',
      action: 'chat',
      instruction: 'ring \u0007 del \u007f c1 \u0085',
      transitions: ['start1'],
    },
  ],
});

/**
 * `nodes` chat nodes, each with two labelled transitions to nodes picked at random (seeded, so the same
 * graph every time): the hard case for a layered layout, which bench/export.bench.ts times.
 */
export function randomGraph(nodes: number, seed = 1): GraphFile {
  let state = seed;
  const pick = (): string => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return `step_${Math.floor((state / 2 ** 31) * nodes)}`;
  };
  return graph({
    name: `random_${nodes}`,
    nodes: Array.from({ length: nodes }, (_, i) => ({
      name: `step_${i}`,
      action: 'chat',
      instruction: `Tell the user something about topic ${i}, briefly.`,
      transitions: [pick(), pick()],
      transitionQuestion: 'Which way now?',
      transitionChoices: ['the user wants more', 'the user is done'],
    })),
  });
}
