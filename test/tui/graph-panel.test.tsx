import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from 'ink-testing-library';
import type { GraphView } from '../../src/graph/view.js';
import {
  KEY,
  SIZE,
  applyEdit,
  chainGraph,
  mountChat,
  supportGraph,
  versionedSupportGraph,
} from './helpers.js';

afterEach(cleanup);

function chat(graph: GraphView = supportGraph(), size: { rows: number; columns: number } = SIZE) {
  return mountChat({ graph, size });
}

/** The graph panel's row for `name`: the line where the name follows the three marker columns. */
function rowOf(frame: string, name: string): string {
  const row = frame
    .split('\n')
    .find((line) => new RegExp(`^[ ›][ ▶•][ +~] +${name.replace(/[()]/g, '\\$&')} `).test(line));
  if (!row) throw new Error(`no row for ${name} in:\n${frame}`);
  return row;
}

describe('GraphPanel', () => {
  it('lists nodes breadth-first from the start with their transitions and choices', () => {
    const ui = chat();
    const frame = ui.frame();
    // The row is cut at the panel's edge with an ellipsis, not silently.
    expect(rowOf(frame, 'start1')).toMatch(/→ billing \(a question about a bill\) \|.*…/);
    expect(rowOf(frame, 'tech')).toContain('calls diagnose()');
    expect(frame.indexOf(' start1 ')).toBeLessThan(frame.indexOf(' billing '));
    expect(frame).toContain('── interjections ──');
    expect(rowOf(frame, 'angry')).toContain('(interjection)');
  });

  it('marks the node entered last as current and earlier ones as visited', async () => {
    const ui = chat();
    await ui.emit({ type: 'node.entered', node: 'start1', action: 'chat', depth: 0 });
    await ui.emit({ type: 'node.entered', node: 'billing', action: 'thought', depth: 0 });
    const frame = ui.frame();
    expect(rowOf(frame, 'billing')).toMatch(/^.▶/);
    expect(rowOf(frame, 'start1')).toMatch(/^.•/);
    expect(rowOf(frame, 'answer')).toMatch(/^. /);
  });

  it('marks a node added by the last edit, and one it changed', async () => {
    const graph = versionedSupportGraph();
    const ui = chat(graph);
    await ui.emit(
      applyEdit(graph, {
        op: 'add',
        node: { name: 'refund', action: 'chat', instruction: 'Offer a refund.', transitions: ['answer'] },
      }),
    );
    expect(rowOf(ui.frame(), 'refund')).toMatch(/^..\+/);
    expect(ui.frame()).toContain('edits v1 by self: +refund');

    await ui.emit(
      applyEdit(graph, { op: 'update', name: 'answer', patch: { instruction: 'Answer briefly.' } }),
    );
    expect(rowOf(ui.frame(), 'answer')).toMatch(/^..~/);
    expect(ui.frame()).toContain('edits v1–v2 by self: +refund ~answer');
  });

  it('marks the edits of the current turn only, once the user has spoken', async () => {
    const graph = versionedSupportGraph();
    const ui = chat(graph);
    await ui.emit(
      applyEdit(graph, { op: 'add', node: { name: 'refund', action: 'chat', transitions: ['answer'] } }),
      { type: 'user', text: 'ok' },
      applyEdit(graph, { op: 'update', name: 'answer', patch: { instruction: 'Answer briefly.' } }),
    );
    expect(rowOf(ui.frame(), 'answer')).toMatch(/^..~/);
    expect(rowOf(ui.frame(), 'refund')).toMatch(/^.. /);
    expect(ui.frame()).toContain('edits v2 by self: ~answer');
  });

  it('shows scroll markers instead of cutting a large graph off', () => {
    const ui = chat(chainGraph(100));
    const frame = ui.frame();
    expect(frame).toMatch(/↓ \d+ more/);
    expect(frame).not.toMatch(/↑ \d+ more/);
    const shown = frame.split('\n').filter((line) => /^[ ›][ ▶•][ +~] +n\d+ /.test(line)).length;
    const below = Number(/↓ (\d+) more/.exec(frame)![1]);
    expect(shown + below).toBe(100);
  });

  it('scrolls to keep the current node in view', async () => {
    const ui = chat(chainGraph(100));
    await ui.emit({ type: 'node.entered', node: 'n60', action: 'chat', depth: 0 });
    const frame = ui.frame();
    expect(rowOf(frame, 'n60')).toMatch(/^.▶/);
    expect(frame).toMatch(/↑ \d+ more/);
    expect(frame).toMatch(/↓ \d+ more/);
  });

  it('moves the selection with the arrow keys and keeps it in view', async () => {
    const ui = chat(chainGraph(100));
    await ui.press(KEY.tab); // from the reply line to the graph
    await ui.press(KEY.pageDown, KEY.pageDown, KEY.pageDown, KEY.pageDown);
    expect(rowOf(ui.frame(), 'n40')).toMatch(/^›/);
    expect(ui.frame()).toContain('Node n40');
    await ui.press(KEY.up);
    expect(rowOf(ui.frame(), 'n39')).toMatch(/^›/);
  });
});
