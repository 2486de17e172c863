import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from 'ink-testing-library';
import { applyEdit, mountChat, usage, versionedSupportGraph } from './helpers.js';

afterEach(cleanup);

/** The status bar is the line above the reply line: the last but one of the frame. */
function statusLine(frame: string): string {
  const lines = frame.split('\n');
  return lines[lines.length - 2]!;
}

describe('StatusBar', () => {
  it('shows the node count and version, and updates them after a graph edit', async () => {
    const graph = versionedSupportGraph();
    const ui = mountChat({ graph });
    expect(statusLine(ui.frame())).toContain('nodes: 6 · v0');
    await ui.emit(
      applyEdit(graph, {
        op: 'add',
        node: { name: 'refund', action: 'chat', instruction: 'Offer a refund.', transitions: ['answer'] },
      }),
    );
    expect(statusLine(ui.frame())).toContain('nodes: 7 · v1');
  });

  it('adds up tokens and the cost the model calls report, and names the chatbot model', async () => {
    const ui = mountChat();
    await ui.emit(
      {
        type: 'model.call',
        role: 'classifier',
        model: 'small-model',
        purpose: 'transition',
        usage: usage(900, 1),
        costUsd: 0.0901,
        ms: 3,
        scripted: false,
      },
      {
        type: 'model.call',
        role: 'chatbot',
        model: 'gpt-4o-mini',
        purpose: 'node start1',
        usage: usage(1000, 99),
        costUsd: 0.1099,
        ms: 9,
        scripted: false,
      },
    );
    const status = statusLine(ui.frame());
    expect(status).toMatch(/^gpt-4o-mini · /);
    expect(status).toContain('tokens: 2,000 (1,900 in / 100 out)');
    expect(status).toContain('est. $0.2000');
    expect(status).not.toContain('[scripted]');
  });

  it('says [scripted] when the scripted provider answered', async () => {
    const ui = mountChat();
    await ui.emit({
      type: 'model.call',
      role: 'chatbot',
      model: 'scripted',
      purpose: 'node start1',
      usage: usage(1, 1),
      ms: 0,
      scripted: true,
    });
    expect(statusLine(ui.frame())).toContain('scripted [scripted] · nodes: 6');
    // The scripted model has no price.
    expect(statusLine(ui.frame())).toContain('est. cost n/a');
  });

  it('reads the same for the same model before its first call as after it: n/a when it has no price', async () => {
    const unpriced = mountChat({ model: 'llama3.2' });
    expect(statusLine(unpriced.frame())).toContain('est. cost n/a');
    await unpriced.emit({
      type: 'model.call',
      role: 'chatbot',
      model: 'llama3.2',
      purpose: 'node start1',
      usage: usage(10, 5),
      ms: 4,
      scripted: false,
    });
    expect(statusLine(unpriced.frame())).toContain('est. cost n/a');
    cleanup();
    const priced = mountChat({ model: 'gpt-4o-mini' });
    expect(statusLine(priced.frame())).toContain('est. $0.0000');
  });

  it('names the model and says [scripted] before any call when the caller knows them', () => {
    const ui = mountChat({ model: 'quiz.script.json', scripted: true });
    expect(statusLine(ui.frame())).toMatch(/^quiz\.script\.json \[scripted\] · nodes: 6/);
  });

  it('shows elapsed time since the run started', async () => {
    let now = 1_000;
    const ui = mountChat({ now: () => now });
    now = 66_000;
    await ui.emit({ type: 'run.started', graph: 'support', nodes: 6, version: 0 });
    now = 131_000;
    // The interpreter reports a start for every reply; the clock keeps counting from the first.
    await ui.emit({ type: 'run.started', graph: 'support', nodes: 6, version: 0 });
    expect(statusLine(ui.frame())).toMatch(/ · 1m 05s$/);
  });
});
