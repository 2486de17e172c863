import { stripVTControlCharacters } from 'node:util';
import { cleanup, render } from 'ink-testing-library';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AgentEvent } from '../../src/events.js';
import { createFlowStore, FlowLayout, renderFlowUI, type FlowStore } from '../../src/tui/flow/index.js';
import { colorTheme, monoTheme, ThemeContext, type Theme } from '../../src/tui/theme.js';
import { eventBus, FakeKeyboard, FakeTerminal, settle, SIZE, usage } from './helpers.js';

// Chalk decides its colour level when it loads; force colour so that the colour theme has escape codes
// to lose, whatever terminal (or none) runs the tests.
vi.hoisted(() => {
  process.env['FORCE_COLOR'] = '1';
});

const ESC = '\u001B';

afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

/**
 * A pass of `brief` as the runner reports it: outline and facts run together; outline's first answer is
 * rejected and its second adds a temporary node; facts fails, so critique is blocked; publish was
 * skipped (reused); then draft and the temporary node run together.
 */
const PASS = {
  started: {
    type: 'flow.started',
    flow: 'brief',
    pass: 1,
    nodes: ['outline', 'facts', 'draft', 'critique', 'publish'],
    concurrency: 2,
    resumed: false,
  },
  step1: [
    { type: 'flow.step', step: 1, nodes: ['outline', 'facts'] },
    { type: 'flow.node', node: 'outline', status: 'running', attempt: 1 },
    { type: 'flow.node', node: 'facts', status: 'running', attempt: 1 },
    { type: 'flow.delta', node: 'outline', delta: 'Sure! Here is an outline:\n1. Why flows' },
    { type: 'flow.delta', node: 'facts', delta: 'Fact one: DAGs have no cycles.' },
  ],
  retry: [
    {
      type: 'flow.node',
      node: 'outline',
      status: 'retry',
      attempt: 2,
      detail: 'the answer holds no JSON object',
    },
    { type: 'flow.delta', node: 'outline', delta: '{"sections": ["why", "how"' },
  ],
  settle1: [
    { type: 'model.call', ...call(300, 100) },
    { type: 'model.call', ...call(200, 100) },
    { type: 'model.call', ...call(100, 34) },
    {
      type: 'flow.node',
      node: 'outline',
      status: 'done',
      attempt: 2,
      tokens: 700,
      output: { sections: ['why', 'how'] },
    },
    {
      type: 'flow.node',
      node: 'facts',
      status: 'failed',
      detail: 'the model could not be reached',
      tokens: 134,
    },
    { type: 'flow.changed', by: 'outline', change: 'add node examples', applied: true },
    {
      type: 'flow.changed',
      by: 'outline',
      change: 'add edge draft → outline',
      applied: false,
      reason: 'it would close a cycle',
    },
    { type: 'flow.database', by: 'outline', keys: ['sections'] },
  ],
  step2: [
    { type: 'flow.node', node: 'publish', status: 'reused', output: 'old post', tokens: 340 },
    { type: 'flow.node', node: 'critique', status: 'blocked', detail: 'skipped: upstream failed (facts)' },
    { type: 'flow.step', step: 2, nodes: ['draft', 'examples'] },
    { type: 'flow.node', node: 'draft', status: 'running', attempt: 1 },
    { type: 'flow.node', node: 'examples', status: 'running', attempt: 1 },
    { type: 'flow.delta', node: 'draft', delta: 'Flows run the ready nodes at once.' },
  ],
  end: [
    { type: 'flow.node', node: 'draft', status: 'done', attempt: 1, tokens: 300, output: 'text' },
    { type: 'flow.node', node: 'examples', status: 'done', attempt: 1, tokens: 100, output: ['a'] },
    {
      type: 'flow.ended',
      pass: 1,
      done: 3,
      failed: 1,
      reused: 1,
      blocked: 1,
      tokens: 1234,
      savedTokens: 340,
      ms: 4200,
    },
  ],
} satisfies Record<string, AgentEvent | AgentEvent[]>;

function call(promptTokens: number, completionTokens: number) {
  return {
    role: 'chatbot' as const,
    model: 'scripted-model',
    purpose: 'flow node',
    usage: usage(promptTokens, completionTokens),
    ms: 3,
    scripted: true,
  };
}

interface MountOptions {
  theme?: Theme;
  columns?: number;
  rows?: number;
  now?: () => number;
  savedTo?: string;
}

/** The flow view on a fixed-size terminal, redrawn on every event, with its store and bus. */
function mountFlow(options: MountOptions = {}) {
  const { bus, emit } = eventBus();
  const now = options.now ?? (() => 1_000);
  const store: FlowStore = createFlowStore(bus, { flow: 'brief', attempts: 3, now, throttleMs: 0 });
  const instance = render(
    <ThemeContext.Provider value={options.theme ?? monoTheme}>
      <FlowLayout
        store={store}
        model="scripted-model"
        scripted
        savedTo={options.savedTo ?? 'ws/.meta-agent/flows/brief.flow-run.json'}
        size={{ rows: options.rows ?? SIZE.rows, columns: options.columns ?? SIZE.columns }}
        now={now}
      />
    </ThemeContext.Provider>,
  );
  /** The last frame, escape codes and all. */
  const raw = (): string => instance.lastFrame() ?? '';
  /** The last frame without escape codes (the mono theme has none to remove). */
  const frame = (): string => stripVTControlCharacters(raw());
  return { bus, emit, store, raw, frame };
}

/** The frame's line that names `node`. */
function lineOf(frame: string, node: string): string {
  const line = frame.split('\n').find((l) => new RegExp(`^\\S+ ${node}\\b`).test(l));
  if (line === undefined) throw new Error(`no line for ${node} in:\n${frame}`);
  return line.trimEnd();
}

/** The last two lines: the status bar. */
function statusBar(frame: string): string {
  return frame.split('\n').slice(-2).join('\n');
}

describe('the flow view', () => {
  it('names the flow before the pass starts, then lists its nodes pending', async () => {
    const ui = mountFlow();
    expect(ui.frame()).toContain('flow brief · starting');
    await ui.emit(PASS.started);
    const frame = ui.frame();
    expect(frame).toContain('flow brief · pass 1 · concurrency 2');
    expect(frame).not.toContain('resumed');
    for (const node of PASS.started.nodes)
      expect(lineOf(frame, node)).toMatch(new RegExp(`^· ${node} +pending$`));
  });

  it('shows running nodes with the tail of their answers, gone once they are done', async () => {
    const ui = mountFlow();
    await ui.emit(PASS.started, ...PASS.step1);
    const running = ui.frame();
    expect(lineOf(running, 'outline')).toMatch(/ outline +running$/);
    expect(lineOf(running, 'facts')).toMatch(/ facts +running$/);
    expect(running).toContain('    │ Sure! Here is an outline:\n    │ 1. Why flows');
    expect(running).toContain('    │ Fact one: DAGs have no cycles.');
    await ui.emit(...PASS.retry, ...PASS.settle1);
    const settled = ui.frame();
    expect(lineOf(settled, 'outline')).toMatch(/^✓ outline +done · 700 tokens · 2 answers · wrote sections$/);
    expect(settled).not.toContain('│');
    expect(settled).not.toContain('Here is an outline');
  });

  it('shows a retry with its attempt and the reason the last answer was rejected', async () => {
    const ui = mountFlow();
    await ui.emit(PASS.started, ...PASS.step1, ...PASS.retry);
    const frame = ui.frame();
    expect(lineOf(frame, 'outline')).toMatch(
      /^↻ outline +retry \(attempt 2\/3\): the answer holds no JSON object$/,
    );
    // The rejected answer's text is dropped; the new one streams in.
    expect(frame).not.toContain('Here is an outline');
    expect(frame).toContain('    │ {"sections": ["why", "how"');
  });

  it('marks a failed node, the node it blocks naming it, a reused node and a temporary node', async () => {
    const ui = mountFlow();
    await ui.emit(PASS.started, ...PASS.step1, ...PASS.retry, ...PASS.settle1, ...PASS.step2);
    const frame = ui.frame();
    expect(lineOf(frame, 'facts')).toMatch(/^✗ facts +failed: the model could not be reached · 134 tokens$/);
    expect(lineOf(frame, 'critique')).toMatch(/^⊘ critique +skipped: upstream failed \(facts\)$/);
    expect(lineOf(frame, 'publish')).toMatch(/^↺ publish +reused \(saved 340 tokens\)$/);
    expect(lineOf(frame, 'examples')).toMatch(/ examples \(temporary\) +running$/);
    expect(frame).toContain('    │ Flows run the ready nodes at once.');
    // The temporary node joins the list after the flow's own nodes.
    expect(frame.indexOf('examples (temporary)')).toBeGreaterThan(frame.indexOf(' publish '));
    expect(frame).toContain(
      'Temporary changes (2)\n' +
        '  + outline: add node examples\n' +
        '  ✗ outline: add edge draft → outline (refused: it would close a cycle)',
    );
  });

  it('shows the step, nodes done, tokens, time, the model and where the run is saved', async () => {
    let clock = 1_000;
    const ui = mountFlow({ now: () => clock });
    await ui.emit(PASS.started, ...PASS.step1, ...PASS.retry, ...PASS.settle1, ...PASS.step2);
    clock += 3_000;
    await ui.emit({ type: 'flow.delta', node: 'draft', delta: ' More.' });
    expect(statusBar(ui.frame())).toBe(
      'step 2 · 2/6 done · tokens 834 · time 3s · scripted-model [scripted]\n' +
        'saved to ws/.meta-agent/flows/brief.flow-run.json',
    );
  });

  it('prints the pass’s report at its end: every node, every change and the summary', async () => {
    const ui = mountFlow();
    await ui.emit(PASS.started, ...PASS.step1, ...PASS.retry, ...PASS.settle1, ...PASS.step2, ...PASS.end);
    const frame = ui.frame();
    expect(frame).toContain(
      '■ pass 1 ended: 3 done · 1 failed · 1 reused · 1 blocked · 1,234 tokens · saved 340 tokens · 4.2s',
    );
    expect(lineOf(frame, 'draft')).toMatch(/^✓ draft +done · 300 tokens$/);
    expect(lineOf(frame, 'examples')).toMatch(/^✓ examples \(temporary\) +done · 100 tokens$/);
    expect(frame).toContain('  + outline: add node examples');
    expect(statusBar(frame)).toContain(
      'step 2 · 4/6 done · tokens 1,234 · time 4s · scripted-model [scripted]',
    );
    // Printed once: the live part is gone, only the status bar is drawn below the report.
    expect(frame.match(/flow brief · pass 1/g)).toHaveLength(1);
  });

  it('says the pass stopped before its end when it is closed without one', async () => {
    const ui = mountFlow();
    await ui.emit(PASS.started, ...PASS.step1);
    ui.store.close();
    await settle();
    const frame = ui.frame();
    expect(frame).toContain(
      '■ pass 1 stopped before its end: running it again goes on from its last finished step',
    );
    expect(lineOf(frame, 'outline')).toMatch(/^■ outline +stopped: asked again when the pass goes on$/);
    expect(frame).not.toContain('│');
  });

  it('renders a hostile answer inert: no escape sequence or control character reaches the terminal', async () => {
    const ui = mountFlow();
    await ui.emit(
      PASS.started,
      { type: 'flow.node', node: 'outline', status: 'running', attempt: 1 },
      { type: 'flow.delta', node: 'outline', delta: 'ok \u001b]0;pwned title\u0007\u001b[2J\u001b[31mred' },
      { type: 'flow.delta', node: 'outline', delta: '\u001b[0m \u001b]8;;http://evil.example/\u001b\\link' },
      { type: 'flow.delta', node: 'outline', delta: ' bell\u0007 csi\u009b2J \rback\u001b' },
    );
    const raw = ui.raw();
    expect(raw).not.toContain(ESC);
    // eslint-disable-next-line no-control-regex -- control characters are what this looks for
    expect(raw).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(raw).not.toContain('pwned title');
    expect(raw).toContain('    │ ok red link bell\\u0007 csi \\u000dback\\u001b');
  });

  it('fits a narrow terminal: every line truncated, none wrapped', async () => {
    const ui = mountFlow({ columns: 40 });
    const long = 'a-very-long-answer-word '.repeat(20);
    await ui.emit(
      PASS.started,
      ...PASS.step1,
      { type: 'flow.delta', node: 'facts', delta: long },
      ...PASS.retry,
      { type: 'flow.node', node: 'facts', status: 'failed', detail: `the model said ${long}` },
    );
    const lines = ui.frame().split('\n');
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(40);
    expect(lines.filter((l) => l.startsWith('✗ facts'))).toHaveLength(1);
    // The figures lose their words before the model and [scripted] are cut.
    expect(statusBar(ui.frame())).toMatch(/^0\/5 · scripted-model \[scripted\]\n…/);
  });

  it('fits a short terminal: quiet nodes fold into one line each', async () => {
    const { bus, emit } = eventBus();
    const store = createFlowStore(bus, { flow: 'wide', throttleMs: 0 });
    const names = Array.from({ length: 30 }, (_, i) => `n${i}`);
    const instance = render(
      <ThemeContext.Provider value={monoTheme}>
        <FlowLayout store={store} model="m" scripted={false} size={{ rows: 12, columns: 80 }} />
      </ThemeContext.Provider>,
    );
    await emit(
      { type: 'flow.started', flow: 'wide', pass: 1, nodes: names, concurrency: 4, resumed: false },
      ...names
        .slice(0, 10)
        .map((node): AgentEvent => ({ type: 'flow.node', node, status: 'done', tokens: 1 })),
      { type: 'flow.node', node: 'n10', status: 'running', attempt: 1 },
    );
    const frame = instance.lastFrame() ?? '';
    expect(frame.split('\n').length).toBeLessThan(12);
    expect(frame).toContain('✓ 10 done: n0, n1, n2');
    expect(frame).toMatch(/ n10 +running/);
    expect(frame).toContain('· 19 pending: n11, n12');
  });

  it('uses colour in the colour theme, and none at all in the NO_COLOR theme, keeping the marks', async () => {
    const events = [PASS.started, ...PASS.step1, ...PASS.retry, ...PASS.settle1, ...PASS.step2, ...PASS.end];
    const coloured = mountFlow({ theme: colorTheme });
    await coloured.emit(...events);
    expect(coloured.raw()).toContain(ESC);
    const plain = mountFlow({ theme: monoTheme });
    await plain.emit(...events);
    expect(plain.raw()).not.toContain(ESC);
    expect(plain.raw()).toMatch(/^✗ facts /m);
    expect(plain.raw()).toMatch(/^↺ publish /m);
  });
});

describe('createFlowStore', () => {
  it('redraws a burst of streamed text at most once per window, and at once when closed', () => {
    vi.useFakeTimers();
    const { bus } = eventBus();
    const store = createFlowStore(bus, { flow: 'brief', throttleMs: 50 });
    const redraws = vi.fn();
    store.subscribe(redraws);
    bus.emit(PASS.started);
    expect(redraws).toHaveBeenCalledTimes(1);
    bus.emit({ type: 'flow.node', node: 'outline', status: 'running', attempt: 1 });
    for (let i = 0; i < 20; i++) bus.emit({ type: 'flow.delta', node: 'outline', delta: `${i} ` });
    expect(redraws).toHaveBeenCalledTimes(1);
    expect(store.getState().view.nodes[0]!.status).toBe('pending');
    vi.advanceTimersByTime(50);
    expect(redraws).toHaveBeenCalledTimes(2);
    expect(store.getState().view.nodes[0]!.live).toContain('19 ');
    bus.emit({ type: 'flow.delta', node: 'outline', delta: 'last' });
    store.close();
    expect(redraws).toHaveBeenCalledTimes(3);
    expect(store.getState()).toMatchObject({ closed: true });
    expect(store.getState().view.nodes[0]!.live).toContain('last');
    store.dispose();
    bus.emit({ type: 'flow.node', node: 'outline', status: 'done' });
    vi.advanceTimersByTime(100);
    expect(redraws).toHaveBeenCalledTimes(3);
  });
});

describe('renderFlowUI', () => {
  it('mounts on a terminal without reading keys, and unmounts when asked', async () => {
    const stdout = new FakeTerminal();
    const stdin = new FakeKeyboard();
    const rawMode = vi.spyOn(stdin, 'setRawMode');
    const { bus } = eventBus();
    const ui = renderFlowUI({
      bus,
      flow: 'brief',
      model: 'scripted-model',
      scripted: true,
      savedTo: 'brief.flow-run.json',
      attempts: 3,
      stdout: stdout as unknown as NodeJS.WriteStream,
      stdin: stdin as unknown as NodeJS.ReadStream,
      patchConsole: false,
      theme: monoTheme,
    });
    try {
      bus.emit(PASS.started);
      for (const event of PASS.step1) bus.emit(event);
      await vi.waitFor(() => expect(stdout.output).toContain('1. Why flows'));
      for (const event of [...PASS.retry, ...PASS.settle1, ...PASS.step2, ...PASS.end]) bus.emit(event);
      ui.finish();
      await vi.waitFor(() => expect(stdout.output).toContain('■ pass 1 ended: 3 done'));
      expect(stdout.output).toContain('saved to brief.flow-run.json');
      expect(rawMode).not.toHaveBeenCalled();
    } finally {
      ui.unmount();
      ui.unmount();
    }
    await ui.waitUntilExit();
  });
});
