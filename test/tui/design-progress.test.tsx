import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from 'ink-testing-library';
import { App } from '../../src/tui/App.js';
import { monoTheme } from '../../src/tui/theme.js';
import { SIZE, eventBus, mount } from './helpers.js';

afterEach(cleanup);

function design() {
  const { bus, emit } = eventBus();
  const ui = mount(<App mode="design" bus={bus} onQuit={() => {}} size={SIZE} theme={monoTheme} />);
  return { ...ui, emit };
}

/** The frame's line for `stage`, with the spinner glyph (which changes over time) replaced by `*`. */
function stageLine(frame: string, stage: string): string {
  const line = frame.split('\n').find((l) => l.slice(1).startsWith(` ${stage}  `));
  if (!line) throw new Error(`no line for stage ${stage} in:\n${frame}`);
  return /^[\u2800-\u28FF]/.test(line) ? `*${line.slice(1)}` : line;
}

describe('DesignProgress', () => {
  it('shows a spinner while a stage runs and a check once it is done', async () => {
    const ui = design();
    await ui.emit({ type: 'design.stage', stage: 'outline', status: 'start' });
    expect(stageLine(ui.frame(), 'outline')).toBe('* outline  running');
    await ui.emit({ type: 'design.stage', stage: 'outline', status: 'done', detail: '6 nodes' });
    expect(stageLine(ui.frame(), 'outline')).toBe('✓ outline  done · 6 nodes');
    expect(ui.frame()).toContain('1/1 stages done');
  });

  it('counts retries and lists the reason for each', async () => {
    const ui = design();
    await ui.emit(
      { type: 'design.stage', stage: 'dot draft', status: 'start' },
      { type: 'design.stage', stage: 'dot draft', status: 'retry', detail: 'syntax error in line 3' },
      { type: 'design.stage', stage: 'dot draft', status: 'retry', detail: 'edge to unknown node "x"' },
    );
    const frame = ui.frame();
    expect(stageLine(frame, 'dot draft')).toBe('* dot draft  retry 2');
    expect(frame).toContain('    retry 1: syntax error in line 3\n    retry 2: edge to unknown node "x"');
    expect(frame).toContain('0/1 stages done · 2 retries');
  });

  it('marks a failed stage with its reason', async () => {
    const ui = design();
    await ui.emit(
      { type: 'design.stage', stage: 'validate', status: 'start' },
      { type: 'design.stage', stage: 'validate', status: 'fail', detail: 'node "x" has no transitions' },
    );
    expect(stageLine(ui.frame(), 'validate')).toBe('✗ validate  failed');
    expect(ui.frame()).toContain('    failed: node "x" has no transitions');
  });

  it('shows the last lines the model streamed for the running stage', async () => {
    const ui = design();
    const draft = Array.from({ length: 40 }, (_, i) => `  n${i} -> n${i + 1};`).join('\n');
    await ui.emit(
      { type: 'design.stage', stage: 'dot draft', status: 'start' },
      { type: 'model.delta', role: 'chatbot', purpose: 'design: dot draft', delta: `digraph G {\n${draft}` },
      { type: 'model.delta', role: 'chatbot', purpose: 'design: dot draft', delta: '\n}' },
    );
    const frame = ui.frame();
    expect(frame).toMatch(/── dot draft: model output \(last \d+ lines\) ──/);
    expect(frame).toContain('n39 -> n40;\n  }');
    expect(frame).not.toContain('digraph G {');
  });

  it('starts a retried stage streaming afresh', async () => {
    const ui = design();
    await ui.emit(
      { type: 'design.stage', stage: 'outline', status: 'start' },
      { type: 'model.delta', role: 'chatbot', purpose: 'design: outline', delta: 'first attempt' },
      { type: 'design.stage', stage: 'outline', status: 'retry', detail: 'too few nodes' },
      { type: 'model.delta', role: 'chatbot', purpose: 'design: outline', delta: 'second attempt' },
    );
    expect(ui.frame()).toContain('second attempt');
    expect(ui.frame()).not.toContain('first attempt');
  });
});
