import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from 'ink-testing-library';
import { nodeSpecSchema } from '../../src/graph/schema.js';
import { NODE_FIELDS, USUAL_FIELDS, nodeFieldLines } from '../../src/tui/node-fields.js';
import { KEY, SIZE, applyEdit, mountChat, versionedSupportGraph } from './helpers.js';

afterEach(cleanup);

function chat(rows: number = SIZE.rows) {
  const graph = versionedSupportGraph();
  return { ...mountChat({ graph, history: graph, size: { ...SIZE, rows } }), graph };
}

/** The right-hand column (inspector or history): the text from the column where its title starts. */
function rightColumn(frame: string, title: string): string[] {
  const lines = frame.split('\n');
  const head = lines.findIndex((l) => l.includes(title));
  const column = lines[head]!.indexOf(title) - 2;
  return lines.slice(head).map((l) => l.slice(column).trimEnd());
}

describe('NodeInspector', () => {
  it('shows every usual field of the selected node, empty ones included, and the rarer ones only when set', async () => {
    const ui = chat(40);
    await ui.emit({ type: 'node.entered', node: 'start1', action: 'chat', depth: 0 });
    const column = rightColumn(ui.frame(), 'Node start1').join('\n');
    for (const field of NODE_FIELDS)
      if (USUAL_FIELDS.has(field)) expect(column).toContain(`${field}:`);
      else expect(column).not.toContain(`${field}:`);
    // A value too long for the label's line goes below it.
    expect(column).toContain('instruction:\n  Greet the user and ask what they need.');
    expect(column).toContain('transitions:\n  A) billing\n  B) tech');
    expect(column).toContain('transitionChoices:\n  A) a question about a bill\n  B) a technical problem');
    expect(column).toContain('notes: —');
    expect(column).toContain('Node start1  ▶ current');
  });

  it('lists a rarer field once it is set', () => {
    const node = nodeSpecSchema.parse({ name: 'a', action: 'chat', questionPrompt: 'Read closely.' });
    expect(nodeFieldLines(node, 60)).toContainEqual({ label: 'questionPrompt', text: 'Read closely.' });
  });

  it('follows the arrow keys from the graph panel', async () => {
    const ui = chat();
    await ui.press(KEY.tab, KEY.down);
    expect(ui.frame()).toContain('Node billing');
    expect(rightColumn(ui.frame(), 'Node billing').join('\n')).toContain(
      'instruction: plan = Plan the answer.',
    );
    await ui.press(KEY.escape);
    expect(ui.frame()).toContain('Node start1');
  });

  it('scrolls long field lists with markers rather than cutting them off', async () => {
    const ui = chat(14);
    await ui.press(KEY.tab, KEY.tab); // the inspector
    expect(ui.frame()).toMatch(/↓ \d+ more/);
    await ui.press(KEY.pageDown);
    expect(ui.frame()).toMatch(/↑ \d+ more/);
  });
});

describe('HistoryView', () => {
  it('lists versions newest first and shows the diff of the selected one', async () => {
    const ui = chat();
    await ui.emit(
      applyEdit(ui.graph, {
        op: 'add',
        node: { name: 'refund', action: 'chat', instruction: 'Offer a refund.', transitions: ['answer'] },
      }),
      applyEdit(ui.graph, { op: 'update', name: 'answer', patch: { instruction: 'Answer briefly.' } }),
    );
    await ui.press(KEY.tab, KEY.tab, KEY.tab); // reply line -> graph -> inspector -> history
    const frame = ui.frame();
    expect(frame).toContain('History  2 edits');
    expect(frame).toMatch(/› v2 {2}update answer {2}by self/);
    expect(frame).toMatch(/ {2}v1 {2}add refund {2}by self/);
    expect(frame).toContain('~ v2: changed answer');
    expect(rightColumn(frame, 'History').join('\n')).toContain(
      '    instruction:\n      - Answer using $plan.\n      + Answer briefly.',
    );

    await ui.press(KEY.down);
    expect(ui.frame()).toContain('+ v1: added refund');
  });

  it('says so when the graph has no edits yet', async () => {
    const ui = chat();
    await ui.press(KEY.shiftTab);
    expect(ui.frame()).toContain('no edits yet: the graph is as loaded');
  });
});
