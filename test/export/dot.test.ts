import { describe, expect, it } from 'vitest';
import { toDot } from '../../src/export/dot.js';
import { graphviz } from '../../src/export/graphviz.js';
import { loadGraphFile } from '../../src/graph/load.js';
import { graphFileSchema } from '../../src/graph/schema.js';
import {
  awkwardGraph,
  branchGraph,
  controlGraph,
  DESIGNER_GRAPH,
  FRACTION_AGENT_CSV,
  quizGraph,
  SIMPLE_EXAMPLE_CSV,
} from './fixtures.js';

const HEADER = (name: string): string[] => [
  `digraph "${name}" {`,
  `  graph [rankdir=TB, fontname="Helvetica", fontsize=12, labelloc=t, label=<<B>${name}</B>>, nodesep=0.35, ranksep=0.45];`,
  '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", color="#52606d", fontname="Helvetica", fontsize=11, margin="0.14,0.07"];',
  '  edge [color="#52606d", fontname="Helvetica", fontsize=9, fontcolor="#334e68"];',
];

describe('DOT export', () => {
  it('draws choices as edge labels, a call as a dashed edge, a category as a cluster and an interjection dashed', () => {
    expect(toDot(quizGraph)).toBe(
      [
        ...HEADER('quiz'),
        '  subgraph "cluster_quiz" {',
        '    label=<<I>quiz</I>>;',
        '    style="rounded,dashed";',
        '    color="#9fb3c8";',
        '    "ask_topic" [id="ag-node-1", label=<<B>ask_topic</B><BR/><FONT POINT-SIZE="9" COLOR="#52606d">function</FONT><BR/>question = write_question(topic)>, fillcolor="#f1e8ff"];',
        '    "write_question(topic)" [id="ag-node-2", label=<<B>write_question(topic)</B><BR/><FONT POINT-SIZE="9" COLOR="#52606d">thought</FONT><BR/>Write one short question about<BR/>$topic.>, fillcolor="#fff6dc"];',
        '    "return" [id="ag-mark-0", shape=cds, fillcolor="#eef2f7", fontsize=9, height=0.3, label=<return>];',
        '  }',
        '  "greet" [id="ag-node-0", label=<<B>greet</B><BR/><FONT POINT-SIZE="9" COLOR="#52606d">chat_exact</FONT><BR/>Hi! Shall we start the quiz?<BR/><I>? Does the user want to start?</I>>, fillcolor="#e3f0ff", penwidth=2.5];',
        '  "goodbye" [id="ag-node-3", label=<<B>goodbye</B><BR/><FONT POINT-SIZE="9" COLOR="#52606d">chat</FONT><BR/>Say goodbye.>, fillcolor="#e3f0ff"];',
        '  "rude" [id="ag-node-4", label=<<B>rude</B><BR/><FONT POINT-SIZE="9" COLOR="#52606d">chat</FONT><BR/>Ask the user politely to keep it<BR/>civil.<BR/><FONT COLOR="#b44d12">when: The user is being rude</FONT>>, fillcolor="#e3f0ff", style="rounded,filled,dashed", color="#b44d12"];',
        '  "quit" [id="ag-mark-1", shape=doublecircle, fillcolor="#eef2f7", fontsize=9, margin=0, label=<quit>];',
        '  "greet" -> "ask_topic" [label=<yes>];',
        '  "greet" -> "goodbye" [label=<no>];',
        '  "ask_topic" -> "write_question(topic)" [style=dashed, color="#7b4fd6", fontcolor="#7b4fd6", label=<calls>];',
        '  "ask_topic" -> "goodbye";',
        '  "write_question(topic)" -> "return";',
        '  "goodbye" -> "quit";',
        '  "rude" -> "greet";',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('fans a wildcard out in condition order with the last as else, hubs u.n visits and dots $var jumps', () => {
    expect(toDot(branchGraph)).toBe(
      [
        ...HEADER('branch'),
        '  "score" [id="ag-node-0", label=<<B>score</B><BR/><FONT POINT-SIZE="9" COLOR="#52606d">code</FONT><BR/>points = 7>, fillcolor="#e8f5e9", penwidth=2.5];',
        '  "check.b" [id="ag-node-1", label=<<B>check.b</B><BR/><FONT POINT-SIZE="9" COLOR="#52606d">chat</FONT><BR/>Good.>, fillcolor="#e3f0ff"];',
        '  "check.a" [id="ag-node-2", label=<<B>check.a</B><BR/><FONT POINT-SIZE="9" COLOR="#52606d">chat</FONT><BR/>Great!>, fillcolor="#e3f0ff"];',
        '  "check.c" [id="ag-node-3", label=<<B>check.c</B><BR/><FONT POINT-SIZE="9" COLOR="#52606d">chat</FONT><BR/>Keep trying.>, fillcolor="#e3f0ff"];',
        '  "u.1" [id="ag-node-4", label=<<B>u.1</B><BR/><FONT POINT-SIZE="9" COLOR="#52606d">chat</FONT><BR/>Unit one.>, fillcolor="#e3f0ff"];',
        '  "u.2" [id="ag-node-5", label=<<B>u.2</B><BR/><FONT POINT-SIZE="9" COLOR="#52606d">chat</FONT><BR/>Unit two.>, fillcolor="#e3f0ff"];',
        '  "u.n" [id="ag-mark-0", shape=diamond, fillcolor="#eef2f7", fontsize=9, margin=0, label=<u.n>];',
        '  "$next" [id="ag-mark-1", shape=ellipse, style="dotted", fontsize=10, label=<$next>];',
        '  "return done" [id="ag-mark-2", shape=cds, fillcolor="#eef2f7", fontsize=9, height=0.3, label=<return done>];',
        '  "score" -> "check.a" [label=<points &gt; 8>];',
        '  "score" -> "check.b" [label=<points &gt; 5>];',
        '  "score" -> "check.c" [label=<else>];',
        '  "check.b" -> "u.n";',
        '  "u.n" -> "u.1" [label=<visit 1>];',
        '  "u.n" -> "u.2" [label=<visit 2>];',
        '  "check.a" -> "u.n";',
        '  "check.c" -> "$next" [style=dotted];',
        '  "u.1" -> "score";',
        '  "u.2" -> "return done";',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('escapes quotes, markup and backslashes, and marks a transition to a missing node', () => {
    const dot = toDot(awkwardGraph);
    expect(dot).toContain('digraph "say \\"hi\\" <now>" {');
    expect(dot).toContain('  subgraph "cluster_intro \\"part\\"" {');
    expect(dot).toContain(
      '<BR/>Say &quot;hello&quot; &amp; &lt;wave&gt; then ask: done?<BR/>#1; `x` | y<BR/><I>? Is the user &quot;done&quot;?</I>>',
    );
    expect(dot).toContain('  "a\\b" [id="ag-node-2", label=<<B>a\\b</B>');
    expect(dot).toContain('  "start1" -> "a\\b" [label=<no &lt;really&gt;>];');
    expect(dot).toContain(
      '  "nowhere" [id="ag-mark-0", style="rounded,dashed", color="#d64545", fontcolor="#d64545", label=<nowhere<BR/><FONT POINT-SIZE="8">no such node</FONT>>];',
    );
  });

  it('gives a marker a name of its own when a node already has that name', () => {
    const graph = graphFileSchema.parse({
      name: 'clash',
      nodes: [
        { name: 'a', action: 'chat', transitions: ['quit'] },
        { name: 'quit', action: 'chat', transitions: ['a'] },
      ],
    });
    const dot = toDot(graph);
    expect(dot).toContain(`  "quit'" [id="ag-mark-0", shape=doublecircle`);
    expect(dot).toContain(`  "a" -> "quit'";`);
  });

  it('shows control characters as symbols in IDs and labels: Graphviz would cut a string at NUL', () => {
    const dot = toDot(controlGraph);
    expect(dot).not.toMatch(/(?![\n])\p{Cc}/u);
    expect(dot).toContain('"a\u2400b" [id="ag-node-1"');
    expect(dot).toContain('ring \u2407 del \u2421 c1 \ufffd');
    expect(dot).toContain('"cluster_c\u2400"');
  });

  it('emits the same text every time', () => {
    expect(toDot(quizGraph)).toBe(toDot(structuredClone(quizGraph)));
  });
});

describe('Graphviz', () => {
  const fixtures = [
    ['quiz', () => Promise.resolve(quizGraph)],
    ['branch', () => Promise.resolve(branchGraph)],
    ['awkward names', () => Promise.resolve(awkwardGraph)],
    ['AutoGRAMS fraction tutor (CSV)', async () => (await loadGraphFile(FRACTION_AGENT_CSV)).file],
    ['AutoGRAMS simple example (CSV)', async () => (await loadGraphFile(SIMPLE_EXAMPLE_CSV)).file],
    ['the designer meta-autogram', async () => (await loadGraphFile(DESIGNER_GRAPH)).file],
  ] as const;

  it.each(['a\\', 'a\\\\', 'a"b', 'a\\"b', '"'])('accepts a node named %s', async (name) => {
    const graph = graphFileSchema.parse({ name, nodes: [{ name, action: 'chat', transitions: [name] }] });
    const viz = await graphviz();
    const result = viz.render(toDot(graph), { format: 'json' });
    expect(result.status).toBe('success');
    const objects = (JSON.parse(result.output!) as { objects: { name: string }[] }).objects;
    expect(objects.map((o) => o.name)).toHaveLength(1);
  });

  it.each(fixtures)('accepts the DOT exported for %s without errors', async (_name, load) => {
    const viz = await graphviz();
    const result = viz.render(toDot(await load()), { format: 'svg' });
    expect(result.status).toBe('success');
    // Warnings (a non-ASCII character's width is estimated) are fine; errors are not.
    expect(result.errors.filter((e) => e.level !== 'warning')).toEqual([]);
    // Graphviz sizes boxes by built-in font metrics; an unknown font name falls back to narrower Times.
    expect(result.errors.map((e) => e.message).join('\n')).not.toContain('no hard-coded metrics');
  });
});
