import { describe, expect, it } from 'vitest';
import { toMermaid } from '../../src/export/mermaid.js';
import { graphFileSchema } from '../../src/graph/schema.js';
import { awkwardGraph, branchGraph, quizGraph } from './fixtures.js';

describe('Mermaid export', () => {
  it('draws a flowchart with choices on edges, a dashed call, a category subgraph and a hexagon interjection', () => {
    expect(toMermaid(quizGraph)).toBe(
      [
        'flowchart TD',
        '  subgraph cat_0["quiz"]',
        '    n_ask_topic("<b>ask_topic</b><br/><i>function</i><br/>question = write_question(topic)")',
        '    n_write_question_topic("<b>write_question(topic)</b><br/><i>thought</i><br/>Write one short question about<br/>$topic.")',
        '    m_return(["return"])',
        '  end',
        '  n_greet("<b>greet</b><br/><i>chat_exact</i><br/>Hi! Shall we start the quiz?<br/><i>? Does the user want to start?</i>")',
        '  n_goodbye("<b>goodbye</b><br/><i>chat</i><br/>Say goodbye.")',
        '  n_rude{{"<b>rude</b><br/><i>chat</i><br/>Ask the user politely to keep it<br/>civil.<br/>when: The user is being rude"}}',
        '  m_quit(("quit"))',
        '  n_greet -->|"yes"| n_ask_topic',
        '  n_greet -->|"no"| n_goodbye',
        '  n_ask_topic -.->|"calls"| n_write_question_topic',
        '  n_ask_topic --> n_goodbye',
        '  n_write_question_topic --> m_return',
        '  n_goodbye --> m_quit',
        '  n_rude --> n_greet',
        '  classDef chat fill:#e3f0ff,stroke:#52606d',
        '  class n_greet,n_goodbye,n_rude chat',
        '  classDef start stroke-width:3px',
        '  class n_greet start',
        '  classDef fn fill:#f1e8ff,stroke:#52606d',
        '  class n_ask_topic fn',
        '  classDef thought fill:#fff6dc,stroke:#52606d',
        '  class n_write_question_topic thought',
        '  classDef interjection stroke:#b44d12,stroke-dasharray:5 4',
        '  class n_rude interjection',
        '  classDef marker fill:#eef2f7,stroke:#9fb3c8',
        '  class m_return,m_quit marker',
        '',
      ].join('\n'),
    );
  });

  it('fans a wildcard out with its conditions, hubs u.n visits and dashes a $var jump', () => {
    expect(toMermaid(branchGraph)).toBe(
      [
        'flowchart TD',
        '  n_score("<b>score</b><br/><i>code</i><br/>points = 7")',
        '  n_check_b("<b>check.b</b><br/><i>chat</i><br/>Good.")',
        '  n_check_a("<b>check.a</b><br/><i>chat</i><br/>Great!")',
        '  n_check_c("<b>check.c</b><br/><i>chat</i><br/>Keep trying.")',
        '  n_u_1("<b>u.1</b><br/><i>chat</i><br/>Unit one.")',
        '  n_u_2("<b>u.2</b><br/><i>chat</i><br/>Unit two.")',
        '  m_u_n{"u.n"}',
        '  m_next(["$next"])',
        '  m_return_done(["return done"])',
        '  n_score -->|"points #gt; 8"| n_check_a',
        '  n_score -->|"points #gt; 5"| n_check_b',
        '  n_score -->|"else"| n_check_c',
        '  n_check_b --> m_u_n',
        '  m_u_n -->|"visit 1"| n_u_1',
        '  m_u_n -->|"visit 2"| n_u_2',
        '  n_check_a --> m_u_n',
        '  n_check_c -.-> m_next',
        '  n_u_1 --> n_score',
        '  n_u_2 --> m_return_done',
        '  classDef code fill:#e8f5e9,stroke:#52606d',
        '  class n_score code',
        '  classDef start stroke-width:3px',
        '  class n_score start',
        '  classDef chat fill:#e3f0ff,stroke:#52606d',
        '  class n_check_b,n_check_a,n_check_c,n_u_1,n_u_2 chat',
        '  classDef marker fill:#eef2f7,stroke:#9fb3c8',
        '  class m_u_n,m_next,m_return_done marker',
        '',
      ].join('\n'),
    );
  });

  it('escapes quotes, markup, # and | in labels with Mermaid entity codes', () => {
    const chart = toMermaid(awkwardGraph);
    expect(chart).toContain('  subgraph cat_0["intro #quot;part#quot;"]');
    expect(chart).toContain(
      '<br/>Say #quot;hello#quot; #amp; #lt;wave#gt; then ask: done?<br/>#35;1; #96;x#96; #124; y<br/><i>? Is the user #quot;done#quot;?</i>")',
    );
    expect(chart).toContain('  n_start1 -->|"yes #124; done"| n_end');
    expect(chart).toContain('  n_start1 -->|"no #lt;really#gt;"| n_a_b');
    expect(chart).toContain('  m_nowhere["nowhere<br/>no such node"]');
  });

  it('keeps ids unique when names differ only in punctuation, and never emits a bare keyword like end', () => {
    const graph = graphFileSchema.parse({
      name: 'ids',
      nodes: [
        { name: 'end', action: 'chat', transitions: ['a.b'] },
        { name: 'a.b', action: 'chat', transitions: ['a_b'] },
        { name: 'a_b', action: 'chat', transitions: ['end'] },
      ],
    });
    const chart = toMermaid(graph);
    expect(chart).toContain('  n_end --> n_a_b\n');
    expect(chart).toContain('  n_a_b --> n_a_b_2\n');
    expect(chart).toContain('  n_a_b_2 --> n_end\n');
  });
});
