import { describe, expect, it } from 'vitest';
import { extractDot, parseDot, parseDotAnswer } from '../../meta/dot.js';

const GOOD = `digraph tutor {
  start [label="Greet the user and ask what they want to learn"];
  explain [label="Explain the topic the user chose"];
  quiz [label="Ask a question about the topic"];
  start -> explain [label="The user names a topic"];
  start -> start [label="The user is unsure"];
  explain -> quiz [label="The user understood"];
  quiz -> explain [label="The user answers wrongly"];
  quiz -> start [label="The user answers correctly"];
}`;

describe('parseDot', () => {
  it('reads labelled nodes and edges in declaration order, and the start node', async () => {
    const parsed = await parseDot(GOOD);
    expect(parsed.problems).toEqual([]);
    expect(parsed.start).toBe('start');
    expect(parsed.nodes).toEqual([
      { id: 'start', label: 'Greet the user and ask what they want to learn' },
      { id: 'explain', label: 'Explain the topic the user chose' },
      { id: 'quiz', label: 'Ask a question about the topic' },
    ]);
    expect(parsed.edges).toEqual([
      { from: 'start', to: 'explain', label: 'The user names a topic' },
      { from: 'start', to: 'start', label: 'The user is unsure' },
      { from: 'explain', to: 'quiz', label: 'The user understood' },
      { from: 'quiz', to: 'explain', label: 'The user answers wrongly' },
      { from: 'quiz', to: 'start', label: 'The user answers correctly' },
    ]);
  });

  it('keeps edge order as written even when edges of different nodes interleave', async () => {
    const parsed = await parseDot(`digraph {
  start [label="A"]; b [label="B"]; c [label="C"];
  b -> c [label="2"];
  start -> b [label="1"];
  b -> start [label="3"];
  c -> b [label="4"];
}`);
    expect(parsed.edges.map((e) => e.label)).toEqual(['2', '1', '3', '4']);
  });

  it('merges edges with the same ends into one that names every reply: where they lead, they are one way', async () => {
    const parsed = await parseDot(`digraph {
  start [label="Ask a question"]; feedback [label="Comment on the answer"];
  start -> feedback [label="The user answers right"];
  start -> feedback [label="The user answers wrong"];
  feedback -> start [label="The user wants another"];
}`);
    expect(parsed.problems).toEqual([]);
    expect(parsed.edges).toEqual([
      { from: 'start', to: 'feedback', label: 'The user answers right; or The user answers wrong' },
      { from: 'feedback', to: 'start', label: 'The user wants another' },
    ]);
  });

  it('reads nodes declared in subgraphs and turns label line breaks into spaces', async () => {
    const parsed = await parseDot(`digraph {
  subgraph cluster_a { start [label="Hello\\nthere"]; }
  start -> next [label="says \\"hi\\""];
  next [label="Reply to \\N"];
}`);
    expect(parsed.problems).toEqual([]);
    expect(parsed.nodes).toEqual([
      { id: 'start', label: 'Hello there' },
      { id: 'next', label: 'Reply to next' },
    ]);
    expect(parsed.edges).toEqual([{ from: 'start', to: 'next', label: 'says "hi"' }]);
  });

  it('reports a syntax error with the line Graphviz names and the text of that line', async () => {
    const parsed = await parseDot(`digraph {
  start [label="Hi"];
  other [label="Bye"];
  start -> -> other [label="x"];
}`);
    expect(parsed.problems).toEqual([`line 4: syntax error near '->' in "start -> -> other [label="x"];"`]);
    expect(parsed.nodes).toEqual([]);
  });

  it('reports an unterminated string at the line it starts', async () => {
    const parsed = await parseDot('digraph {\n  start [label="Hi];\n  start -> b;\n}');
    expect(parsed.problems).toEqual([
      'line 2: a quoted string is never closed: add the missing " in "start [label="Hi];"',
    ]);
  });

  it('reports empty input and input that is not DOT', async () => {
    expect((await parseDot('  \n')).problems).toEqual(['the graph is empty: write it as digraph { … }']);
    expect((await parseDot('Here is my graph!')).problems).toEqual([
      `line 1: syntax error near 'Here' in "Here is my graph!"`,
    ]);
  });

  it('asks for a label on every edge, naming the edges without one', async () => {
    const parsed = await parseDot(`digraph {
  start [label="Greet"]; ask [label="Ask"];
  start -> ask;
  ask -> start [label="again"];
}`);
    expect(parsed.problems).toEqual([
      'edge start -> ask has no label: label every edge with how the user replies',
    ]);
  });

  it('lists the first unlabelled edges and counts the rest in one sentence', async () => {
    const nodes = Array.from({ length: 8 }, (_, i) => `n${i} [label="Turn ${i}"];`).join(' ');
    const edges = Array.from({ length: 7 }, (_, i) => `n${i} -> n${i + 1};`).join(' ');
    const parsed = await parseDot(`digraph { ${nodes} ${edges} }`);
    expect(parsed.problems).toEqual([
      'edges n0 -> n1, n1 -> n2, n2 -> n3, n3 -> n4, n4 -> n5 and 2 more have no label: label every edge with how the user replies',
    ]);
  });

  it('reports an edge to a node that is never defined, suggesting the likely intended one', async () => {
    const parsed = await parseDot(`digraph {
  start [label="Greet"]; explain [label="Explain"];
  start -> explian [label="asks"];
  start -> explain [label="asks again"];
  explain -> start [label="done"];
}`);
    expect(parsed.problems).toEqual([
      'edge start -> explian uses node explian, which has no label of its own: did you mean explain? Otherwise define it as explian [label="how the agent replies"]',
    ]);
  });

  it('reports a dangling edge without a suggestion when no defined node is close', async () => {
    const parsed = await parseDot(`digraph {
  start [label="Greet"]; b [label="B"];
  start -> b [label="x"];
  b -> farewell [label="bye"];
}`);
    expect(parsed.problems).toEqual([
      'edge b -> farewell uses node farewell, which has no label of its own: define it as farewell [label="how the agent replies"] or point the edge at a labelled node',
    ]);
  });

  it('reports isolated nodes, labelled or not', async () => {
    const parsed = await parseDot(`digraph {
  start [label="Greet"]; b [label="B"]; lonely [label="Nobody comes here"]; bare;
  start -> b [label="x"];
}`);
    expect(parsed.problems).toEqual([
      'node bare has no label and no edges: label it with how the agent replies and connect it, or remove it',
      'node lonely has no edges: connect it to the conversation or remove it',
    ]);
  });

  it('reports nodes that have edges but cannot be reached from the start', async () => {
    const parsed = await parseDot(`digraph {
  start [label="Greet"]; b [label="B"]; c [label="C"]; d [label="D"];
  start -> b [label="x"];
  c -> d [label="y"];
  d -> c [label="z"];
}`);
    expect(parsed.problems).toEqual([
      'nodes c, d cannot be reached from start: add edges that lead to them or remove them',
    ]);
  });

  it('takes the only node without incoming edges as the start when no node is called start', async () => {
    const parsed = await parseDot(
      'digraph { hello [label="Hi"]; bye [label="Bye"]; hello -> bye [label="x"]; }',
    );
    expect(parsed.problems).toEqual([]);
    expect(parsed.start).toBe('hello');
  });

  it('reports a missing start when no node is called start and every node has incoming edges', async () => {
    const parsed = await parseDot(
      'digraph { a [label="A"]; b [label="B"]; a -> b [label="x"]; b -> a [label="y"]; }',
    );
    expect(parsed.start).toBeUndefined();
    expect(parsed.problems).toEqual([
      "there is no start node: name the node of the agent's first turn start",
    ]);
  });

  it('reports too many and too few nodes against the bounds it is given', async () => {
    expect((await parseDot(GOOD, { maxNodes: 2 })).problems).toEqual([
      'the graph has 3 nodes, more than 2: merge similar turns into one node',
    ]);
    expect((await parseDot(GOOD, { minNodes: 5 })).problems).toEqual([
      'the graph has 3 nodes; draw at least 5, one for each turn of the agent',
    ]);
  });

  it('asks for a digraph when the graph is undirected', async () => {
    const parsed = await parseDot('graph { start [label="A"]; b [label="B"]; start -- b [label="x"]; }');
    expect(parsed.problems).toContain('the graph is undirected: write it as digraph { … } with -> edges');
  });

  it('passes on errors Graphviz reports for a graph it still accepts', async () => {
    const parsed = await parseDot(
      'digraph {\n start [label="A"]; b [label="B"];\n start -> b [label=<<b>x</i>>];\n}',
    );
    expect(parsed.problems[0]).toBe(
      'Graphviz could not read a label: mismatched tag ... x</i> ... in label of edge start -> b',
    );
  });
});

describe('extractDot', () => {
  it('takes the ```dot block of an answer', () => {
    const answer = `Sure! Here is the graph:\n\n\`\`\`dot\n${GOOD}\n\`\`\`\n\nLet me know if you want changes.`;
    expect(extractDot(answer)).toBe(GOOD);
  });

  it('prefers a dot block over an earlier block in another language', () => {
    const answer = '```json\n{"a": 1}\n```\nand\n```graphviz\ndigraph { a -> b }\n```';
    expect(extractDot(answer)).toBe('digraph { a -> b }');
  });

  it('takes an untagged fenced block that holds a graph', () => {
    expect(extractDot('Graph:\n```\ndigraph { a -> b }\n```')).toBe('digraph { a -> b }');
  });

  it('finds a bare digraph in prose, up to its matching brace, skipping braces in quoted labels', () => {
    const answer = 'The plan: digraph g { a [label="uses { and }"]; a -> b } That is all.';
    expect(extractDot(answer)).toBe('digraph g { a [label="uses { and }"]; a -> b }');
  });

  it('returns the rest of an answer cut off inside the graph, for Graphviz to report', () => {
    expect(extractDot('```dot\ndigraph { a -> b')).toBe('digraph { a -> b');
    expect(extractDot('digraph { a -> b [label="x"]')).toBe('digraph { a -> b [label="x"]');
  });

  it('returns undefined when there is no graph', () => {
    expect(extractDot('I could not draw a graph, sorry.')).toBeUndefined();
  });
});

describe('parseDotAnswer', () => {
  it('extracts and parses the graph in a model answer', async () => {
    const parsed = await parseDotAnswer(`Here:\n\`\`\`dot\n${GOOD}\n\`\`\``);
    expect(parsed.problems).toEqual([]);
    expect(parsed.nodes).toHaveLength(3);
  });

  it('reports an answer without a graph as a problem', async () => {
    expect((await parseDotAnswer('No graph today.')).problems).toEqual([
      'the answer contains no DOT graph: write the graph as digraph { … } in a ```dot code block',
    ]);
  });
});
