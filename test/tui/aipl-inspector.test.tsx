import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from 'ink-testing-library';
import { newState, type ConversationState } from '../../src/engine/state.js';
import type { AgentEvent } from '../../src/events.js';
import { graphFileSchema } from '../../src/graph/schema.js';
import { StaticGraph } from '../../src/graph/view.js';
import { KEY, mountChat, SIZE, supportGraph } from './helpers.js';

afterEach(cleanup);

/** The support agent with AIPL turned on. */
function aiplGraph(): StaticGraph {
  const { file } = supportGraph();
  return new StaticGraph(graphFileSchema.parse({ ...file, config: { ...file.config, aipl: {} } }));
}

/** Tall enough that the inspector shows start1's fields and the AIPL section below them unscrolled. */
const TALL = { ...SIZE, rows: 60 };

function phase(turn: number, stored: Record<string, string>, figures = { calls: 1, cached: 0, ms: 5 }) {
  const event: AgentEvent = {
    type: 'aipl.phase',
    label: 'prompt',
    turn,
    ...figures,
    stored: Object.entries(stored).map(([name, value]) => ({ name, value })),
  };
  return event;
}

/** The inspector's AIPL section: from its heading to the panel's end, the right-hand column only. */
function aiplSection(frame: string): string {
  const lines = frame.split('\n');
  const head = lines.findIndex((l) => l.includes('AIPL state:'));
  if (head < 0) return '';
  const column = lines[head]!.indexOf('AIPL state:');
  return lines
    .slice(head)
    .map((l) => l.slice(column).trimEnd())
    .join('\n');
}

describe('the inspector’s AIPL state', () => {
  it('lists the values the phases stored and the last phase’s figures', async () => {
    const ui = mountChat({ graph: aiplGraph(), size: TALL });
    await ui.emit(
      { type: 'node.entered', node: 'start1', action: 'chat', depth: 0 },
      phase(3, { 'user.name': 'Sam', 'user.mood': 'calm' }, { calls: 4, cached: 1, ms: 820 }),
    );
    expect(aiplSection(ui.frame())).toContain(
      [
        'AIPL state:',
        '  turn 3, prompt: 4 model calls, 1 cached,',
        '  820 ms',
        '  user.name = "Sam"  (turn 3)',
        '  user.mood = "calm"  (turn 3)',
      ].join('\n'),
    );
  });

  it('shows a later value of a name in place of the earlier one', async () => {
    const ui = mountChat({ graph: aiplGraph(), size: TALL });
    await ui.emit(
      phase(1, { 'user.name': 'Sam', 'user.mood': 'calm' }),
      phase(2, { 'user.mood': 'tired' }, { calls: 1, cached: 0, ms: 40 }),
    );
    const section = aiplSection(ui.frame());
    expect(section).toContain('turn 2, prompt: 1 model call, 0 cached,\n  40 ms');
    expect(section).toContain('  user.name = "Sam"  (turn 1)\n  user.mood = "tired"  (turn 2)');
    expect(section).not.toContain('calm');
  });

  it('cuts a long value to one line, as the transcript cuts variables', async () => {
    const ui = mountChat({ graph: aiplGraph(), size: TALL });
    await ui.emit(phase(1, { 'user.story': `It began\n${'on a long road '.repeat(20)}` }));
    expect(aiplSection(ui.frame())).toContain('  user.story = "It began\\non a …  (turn 1)\n');
  });

  it('says so before any value is stored', () => {
    const ui = mountChat({ graph: aiplGraph(), size: TALL });
    expect(aiplSection(ui.frame())).toContain('AIPL state:\n  no values stored yet');
  });

  it('is absent for a graph without AIPL', async () => {
    const ui = mountChat({ size: TALL });
    await ui.emit({ type: 'node.entered', node: 'start1', action: 'chat', depth: 0 });
    expect(ui.frame()).toContain('Node start1');
    expect(ui.frame()).not.toContain('AIPL');
  });

  it('is reached by scrolling the inspector when the fields fill it', async () => {
    const ui = mountChat({ graph: aiplGraph() });
    await ui.emit(phase(1, { 'user.name': 'Sam' }));
    expect(ui.frame()).not.toContain('user.name');
    await ui.press(KEY.tab, KEY.tab, KEY.pageDown, KEY.pageDown);
    expect(ui.frame()).toContain('user.name = "Sam"  (turn 1)');
  });
});

describe('a resumed conversation’s AIPL state', () => {
  function saved(): ConversationState {
    const question = 'What is the user called?';
    return {
      ...newState(aiplGraph()),
      aipl: {
        turn: 2,
        log: [
          { name: 'user.name', value: 'Sam', turn: 1, question },
          { name: 'user.mood', value: 'calm', turn: 1, question: 'How does the user feel?' },
          { name: 'user.name', value: 'Samantha', turn: 2, question },
        ],
      },
    };
  }

  it('shows the latest values of the saved log before anything runs', () => {
    const ui = mountChat({ graph: aiplGraph(), resumed: saved(), size: TALL });
    expect(aiplSection(ui.frame())).toContain(
      'AIPL state:\n  user.name = "Samantha"  (turn 2)\n  user.mood = "calm"  (turn 1)',
    );
  });

  it('shows the saved values even when the graph no longer uses AIPL', () => {
    const ui = mountChat({ resumed: saved(), size: TALL });
    expect(aiplSection(ui.frame())).toContain('user.name = "Samantha"  (turn 2)');
  });
});
