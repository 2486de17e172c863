import { stripVTControlCharacters } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup } from 'ink-testing-library';
import type { GraphView } from '../../src/graph/view.js';
import { App } from '../../src/tui/App.js';
import type { TerminalSize } from '../../src/tui/layout-size.js';
import { renderChatUI } from '../../src/tui/render.js';
import { monoTheme } from '../../src/tui/theme.js';
import {
  FakeKeyboard,
  FakeTerminal,
  KEY,
  SIZE,
  chainGraph,
  eventBus,
  mount,
  mountChat,
  settle,
  supportGraph,
} from './helpers.js';

afterEach(cleanup);

function chat(onQuit = vi.fn(), size: TerminalSize = SIZE, graph: GraphView = supportGraph()) {
  return { ...mountChat({ onQuit, size, graph }), onQuit };
}

describe('keys', () => {
  it('quits with q once the reply line does not have focus', async () => {
    const ui = chat();
    await ui.press('q');
    expect(ui.onQuit).not.toHaveBeenCalled();
    expect(ui.frame()).toContain('› q█');
    await ui.press(KEY.tab, 'q');
    expect(ui.onQuit).toHaveBeenCalledTimes(1);
  });

  it('quits with Ctrl+C from anywhere, even while typing', async () => {
    const ui = chat();
    await ui.press('hello', KEY.ctrlC);
    expect(ui.onQuit).toHaveBeenCalledTimes(1);
  });

  it('takes global keys while the agent works, since the reply line cannot take text then', async () => {
    const ui = chat();
    await ui.emit({ type: 'run.started', graph: 'support', nodes: 6, version: 0 });
    await ui.press('?');
    expect(ui.frame()).toContain('Keys');
    expect(ui.frame()).toContain('▶ current  • visited  + added  ~ changed  › selected');
    await ui.press('?');
    expect(ui.frame()).not.toContain('Keys');
  });

  it('moves focus between panels with Tab and back with Shift+Tab', async () => {
    const ui = chat();
    const focused = () => ui.frame().match(/▸ (Graph|Node|History)/)?.[1] ?? 'reply line';
    expect(focused()).toBe('reply line');
    await ui.press(KEY.tab);
    expect(focused()).toBe('Graph');
    await ui.press(KEY.tab);
    expect(focused()).toBe('Node');
    await ui.press(KEY.tab);
    expect(focused()).toBe('reply line');
    await ui.press(KEY.shiftTab);
    expect(focused()).toBe('Node');
  });

  it('moves focus once for each Tab, when several arrive in one read', async () => {
    const ui = chat();
    await ui.press(KEY.tab + KEY.tab);
    expect(ui.frame()).toContain('▸ Node');
    // Back on the reply line, the q typed in the same read is a letter, not the quit key.
    await ui.press(`${KEY.tab}q`);
    expect(ui.frame()).toContain('› q█');
    expect(ui.onQuit).not.toHaveBeenCalled();
  });

  it('names the keys that work where the focus is: Tab out of the reply line, then ? and q', async () => {
    const ui = chat();
    await ui.emit({ type: 'reply', node: 'start1', text: 'Hello! How can I help?' });
    expect(ui.frame()).toContain('· waiting for your reply · Enter: send · Tab: panels, where ?: help');
    await ui.press('?');
    expect(ui.frame()).toContain('› ?█');
    await ui.press(KEY.backspace, KEY.tab);
    expect(ui.frame()).toContain('· waiting for your reply · Tab: panels · ?: help · q: quit');
    await ui.press('?');
    expect(ui.frame()).toContain('Keys');
  });

  it('opens the selected node in the inspector with Enter', async () => {
    const ui = chat();
    await ui.press(KEY.tab, KEY.down, KEY.down, KEY.enter);
    expect(ui.frame()).toContain('▸ Node tech');
  });
});

describe('layout', () => {
  it.each([12, 24, 50])('keeps the live region shorter than a %i-row terminal', async (rows) => {
    const ui = chat(vi.fn(), { rows, columns: 100 }, chainGraph(300));
    await ui.emit(
      { type: 'node.entered', node: 'n150', action: 'chat', depth: 0 },
      { type: 'model.delta', role: 'chatbot', purpose: 'node n150', delta: 'line\n'.repeat(50) },
    );
    expect(ui.frame().split('\n').length).toBeLessThan(rows);
    await ui.press(KEY.tab, '?');
    expect(ui.frame().split('\n').length).toBeLessThan(rows);
    expect(ui.frame()).toMatch(rows < 20 ? /↓ \d+ more/ : /Markers/);
  });

  it('keeps the design view shorter than the terminal', async () => {
    const { bus, emit } = eventBus();
    const ui = mount(
      <App
        mode="design"
        bus={bus}
        graph={chainGraph(300)}
        onQuit={() => {}}
        size={{ rows: 16, columns: 100 }}
        theme={monoTheme}
      />,
    );
    await emit(
      ...Array.from({ length: 12 }, (_, i) => ({
        type: 'design.stage' as const,
        stage: `stage ${i}`,
        status: 'retry' as const,
        detail: 'again',
      })),
      { type: 'model.delta', role: 'chatbot', purpose: 'design', delta: 'x\n'.repeat(30) },
    );
    expect(ui.frame().split('\n').length).toBeLessThan(16);
    expect(ui.frame()).toMatch(/↓ \d+ more/);
  });
});

describe('a terminal that changes width', () => {
  it('erases the screen and prints the last messages again at the new width, not the whole transcript', async () => {
    const stdout = new FakeTerminal();
    const { bus } = eventBus();
    const instance = renderChatUI({
      bus,
      graph: supportGraph(),
      onSubmit: vi.fn(),
      onQuit: vi.fn(),
      stdout: stdout as unknown as NodeJS.WriteStream,
      stdin: new FakeKeyboard() as unknown as NodeJS.ReadStream,
      patchConsole: false,
    });
    for (let i = 1; i <= 8; i++) {
      bus.emit({ type: 'user', text: `question ${i}` });
      bus.emit({ type: 'reply', node: 'start1', text: `answer ${i}` });
    }
    await settle();
    stdout.output = '';
    stdout.columns = 60;
    stdout.emit('resize');
    // Ink draws at most 30 frames a second: the one after the erase may wait for its turn.
    await vi.waitFor(() => expect(stdout.output).toContain('answer 8'));
    const erase = stdout.output.indexOf('\u001B[H\u001B[J');
    expect(erase).toBeGreaterThanOrEqual(0);
    const redrawn = stripVTControlCharacters(stdout.output.slice(erase));
    // 24 rows leave 6 above the live region: the last three exchanges, never the first.
    expect(redrawn).toContain('Sam › question 8\nAva › answer 8');
    expect(redrawn).not.toContain('answer 1\n');
    expect(redrawn.match(/Ava › answer 8/g)).toHaveLength(1);
    instance.unmount();
  });
});

describe('a terminal that changes height, with nothing to print again', () => {
  it('draws the whole view again after erasing the screen', async () => {
    const stdout = new FakeTerminal();
    const instance = renderChatUI({
      bus: eventBus().bus,
      graph: supportGraph(),
      onSubmit: vi.fn(),
      onQuit: vi.fn(),
      stdout: stdout as unknown as NodeJS.WriteStream,
      stdin: new FakeKeyboard() as unknown as NodeJS.ReadStream,
      patchConsole: false,
    });
    await settle();
    stdout.output = '';
    stdout.rows = 30;
    stdout.emit('resize');
    await vi.waitFor(() => expect(stdout.output).toContain('\u001B[H\u001B[J'));
    const redrawn = stripVTControlCharacters(stdout.output.slice(stdout.output.indexOf('\u001B[H\u001B[J')));
    expect(redrawn).toContain('Graph support');
    expect(redrawn).toMatch(/nodes: 6/);
    instance.unmount();
  });
});

describe('renderChatUI', () => {
  it('mounts on the given terminal, draws the live view, and unmounts after calling onQuit on Ctrl+C', async () => {
    const stdout = new FakeTerminal();
    const stdin = new FakeKeyboard();
    const onQuit = vi.fn();
    const onSubmit = vi.fn();
    const { bus } = eventBus();
    const instance = renderChatUI({
      bus,
      graph: supportGraph(),
      onSubmit,
      onQuit,
      stdout: stdout as unknown as NodeJS.WriteStream,
      stdin: stdin as unknown as NodeJS.ReadStream,
      // Vitest owns the console; Ink must not patch it here.
      patchConsole: false,
    });
    bus.emit({ type: 'reply', node: 'start1', text: 'Hello from the agent.' });
    await settle();
    // The live view is drawn while it runs, even on a CI runner (where Ink would print only finished lines).
    expect(stripVTControlCharacters(stdout.output)).toMatch(/nodes: \d+/);
    stdin.type('hi');
    await settle();
    stdin.type('\r');
    await settle();
    expect(onSubmit).toHaveBeenCalledWith('hi');
    stdin.type('\u0003');
    await instance.waitUntilExit();
    expect(onQuit).toHaveBeenCalledTimes(1);
    expect(stripVTControlCharacters(stdout.output)).toContain('Ava › Hello from the agent.');
  });
});
