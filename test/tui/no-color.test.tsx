import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, render } from 'ink-testing-library';
import { App } from '../../src/tui/App.js';
import { eventBus, SIZE, supportGraph, versionedSupportGraph, applyEdit, settle } from './helpers.js';

// Chalk decides its colour level when it loads; force colour so the coloured render below has escape
// codes to lose, whatever terminal (or none) runs the tests.
vi.hoisted(() => {
  process.env['FORCE_COLOR'] = '1';
});

const ESC = '\u001B';

afterEach(() => {
  cleanup();
  vi.unstubAllEnvs();
});

/** A chat view after a run has marked nodes in every way the graph panel can. */
async function markedFrame(): Promise<string> {
  const { bus, emit } = eventBus();
  const graph = versionedSupportGraph();
  const ui = render(
    <App mode="chat" bus={bus} graph={graph} onSubmit={() => {}} onQuit={() => {}} size={SIZE} />,
  );
  await emit(
    { type: 'node.entered', node: 'start1', action: 'chat', depth: 0 },
    { type: 'node.entered', node: 'billing', action: 'thought', depth: 0 },
    applyEdit(graph, {
      op: 'add',
      node: { name: 'refund', action: 'chat', instruction: 'Offer a refund.', transitions: ['answer'] },
    }),
    { type: 'error', message: 'a problem', node: 'billing' },
  );
  await settle();
  return ui.lastFrame() ?? '';
}

describe('NO_COLOR', () => {
  it('renders colours when NO_COLOR is not set', async () => {
    vi.stubEnv('NO_COLOR', '');
    expect(await markedFrame()).toContain(ESC);
  });

  it('renders no escape codes at all when NO_COLOR is set, and keeps the markers', async () => {
    vi.stubEnv('NO_COLOR', '1');
    const frame = await markedFrame();
    expect(frame).not.toContain(ESC);
    expect(frame).toMatch(/^ • {2}start1 /m);
    expect(frame).toMatch(/^›▶ {4}billing /m);
    expect(frame).toMatch(/^ {2}\+ refund /m);
  });

  it('leaves the design view plain too', async () => {
    vi.stubEnv('NO_COLOR', '1');
    const { bus, emit } = eventBus();
    const ui = render(<App mode="design" bus={bus} graph={supportGraph()} onQuit={() => {}} size={SIZE} />);
    await emit(
      { type: 'design.stage', stage: 'outline', status: 'done' },
      { type: 'design.stage', stage: 'dot draft', status: 'retry', detail: 'bad edge' },
      { type: 'design.stage', stage: 'validate', status: 'fail', detail: 'no start' },
    );
    expect(ui.lastFrame()).not.toContain(ESC);
  });
});
