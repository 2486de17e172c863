import { stripVTControlCharacters } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup } from 'ink-testing-library';
import { FakeKeyboard, FakeTerminal, KEY, eventBus, mountChat, settle, supportGraph } from './helpers.js';
import type { AgentEvent } from '../../src/events.js';
import { renderChatUI } from '../../src/tui/render.js';

afterEach(cleanup);

function chat(onSubmit: (text: string) => void = () => {}) {
  return mountChat({ onSubmit });
}

const choseBilling: AgentEvent = {
  type: 'transition',
  from: 'start1',
  to: 'billing',
  kind: 'choice',
  question: 'What does the user need help with?',
  choices: ['a question about a bill', 'a technical problem'],
  answer: 'A',
};

describe('Transcript', () => {
  it('prints the user and the agent under the names the graph gives them', async () => {
    const ui = chat();
    await ui.emit(
      { type: 'reply', node: 'start1', text: 'Hello! How can I help?' },
      { type: 'user', text: 'My bill is wrong.' },
    );
    expect(ui.frame()).toContain('Ava › Hello! How can I help?');
    expect(ui.frame()).toContain('Sam › My bill is wrong.');
  });

  it('shows the classifier choice of a transition in the folded decisions', async () => {
    const ui = chat();
    await ui.emit({ type: 'user', text: 'My bill is wrong.' }, choseBilling);
    expect(ui.frame()).toContain(
      '▸ 1 decision so far · last: start1 → billing  (choice · chose A) a question about a bill',
    );
  });

  it('folds the decisions under the reply they led to, and t unfolds them', async () => {
    const ui = chat();
    await ui.press(KEY.tab); // away from the reply line, so t is a key, not a letter
    await ui.emit(
      { type: 'user', text: 'My bill is wrong.' },
      choseBilling,
      { type: 'node.entered', node: 'billing', action: 'thought', depth: 0 },
      { type: 'model.delta', role: 'chatbot', purpose: 'node billing', delta: 'Check the invoice.' },
      { type: 'transition', from: 'billing', to: 'answer', kind: 'single' },
      { type: 'reply', node: 'answer', text: 'Let me check your invoice.' },
    );
    expect(ui.frame()).toContain(
      'Ava › Let me check your invoice.\n  ▸ 3 decisions · last: billing → answer',
    );

    await ui.press('t');
    await ui.emit(
      { type: 'user', text: 'Thanks.' },
      { type: 'transition', from: 'answer', to: 'start1', kind: 'single' },
      { type: 'reply', node: 'start1', text: 'Anything else?' },
    );
    expect(ui.frame()).toContain('Ava › Anything else?\n  ▾ 1 decision\n    answer → start1');
  });

  it('folds and unfolds with t the decisions of replies already printed, printing each again once', async () => {
    const stdout = new FakeTerminal();
    const stdin = new FakeKeyboard();
    const { bus } = eventBus();
    const instance = renderChatUI({
      bus,
      graph: supportGraph(),
      onSubmit: vi.fn(),
      onQuit: vi.fn(),
      stdout: stdout as unknown as NodeJS.WriteStream,
      stdin: stdin as unknown as NodeJS.ReadStream,
      patchConsole: false,
    });
    for (const event of [
      { type: 'user', text: 'My bill is wrong.' },
      choseBilling,
      { type: 'transition', from: 'billing', to: 'answer', kind: 'single' },
      { type: 'reply', node: 'answer', text: 'Let me check your invoice.' },
    ] satisfies AgentEvent[])
      bus.emit(event);
    await settle();
    // The screen as the last redraw left it: what the terminal shows from its last erase on.
    const screen = () =>
      stripVTControlCharacters(stdout.output.slice(stdout.output.lastIndexOf('\u001B[H\u001B[J')));

    stdin.type(KEY.tab);
    await settle();
    stdin.type('t');
    await vi.waitFor(() =>
      expect(screen()).toContain(
        'Ava › Let me check your invoice.\n  ▾ 2 decisions\n    start1 → billing  (choice · chose A) a question about a bill',
      ),
    );
    expect(screen().match(/Let me check your invoice/g)).toHaveLength(1);

    stdin.type('t');
    await vi.waitFor(() =>
      expect(screen()).toContain(
        'Ava › Let me check your invoice.\n  ▸ 2 decisions · last: billing → answer',
      ),
    );
    expect(screen().match(/Let me check your invoice/g)).toHaveLength(1);
    instance.unmount();
  });

  it('lists thoughts with the text the thought node streamed', async () => {
    const ui = chat();
    await ui.press(KEY.tab, 't');
    await ui.emit(
      { type: 'node.entered', node: 'billing', action: 'thought', depth: 0 },
      { type: 'model.delta', role: 'chatbot', purpose: 'node billing', delta: 'The user ' },
      { type: 'model.delta', role: 'chatbot', purpose: 'node billing', delta: 'was charged twice.' },
      { type: 'variable.set', name: 'plan', value: 'refund', node: 'billing' },
      { type: 'reply', node: 'answer', text: 'You were charged twice; I will refund it.' },
    );
    expect(ui.frame()).toContain(
      '    thought at billing: The user was charged twice.\n    plan = "refund"  (at billing)',
    );
  });

  it('lists what code nodes printed among the decisions, by node', async () => {
    const ui = chat();
    await ui.press(KEY.tab, 't');
    await ui.emit(
      { type: 'node.entered', node: 'billing', action: 'code', depth: 0 },
      { type: 'code.log', node: 'billing', text: 'invoice total 42' },
      { type: 'reply', node: 'answer', text: 'Your invoice is 42.' },
    );
    expect(ui.frame()).toContain('    billing printed: invoice total 42');
  });

  it('shows the error a run stopped at in place of waiting for a reply, and closes the reply line', async () => {
    const onSubmit = vi.fn();
    const ui = chat(onSubmit);
    await ui.emit(
      { type: 'reply', node: 'start1', text: 'Hello! How can I help?' },
      { type: 'user', text: 'My bill is wrong.' },
      { type: 'node.entered', node: 'answer', action: 'chat', depth: 0 },
      { type: 'error', message: 'the model server answered 500', node: 'answer' },
    );
    expect(ui.frame()).toContain('✗ stopped by an error: the model server answered 500');
    expect(ui.frame()).not.toContain('waiting for your reply');
    expect(ui.frame()).toContain('› the run stopped at an error');
    await ui.press('more', KEY.enter);
    expect(onSubmit).not.toHaveBeenCalled();
  });

  it('streams the reply in progress and prints errors with their node', async () => {
    const ui = chat();
    await ui.emit(
      { type: 'node.entered', node: 'answer', action: 'chat', depth: 0 },
      { type: 'model.delta', role: 'chatbot', purpose: 'node answer', delta: 'Let me look' },
    );
    expect(ui.frame()).toContain('Ava is working · at answer');
    expect(ui.frame()).toContain('  Let me look');
    await ui.emit({ type: 'error', message: 'the model timed out', node: 'answer' });
    expect(ui.frame()).toContain('✗ error at node answer: the model timed out');
  });
});

describe('reply line', () => {
  it('submits the typed reply and stays disabled until the agent answers', async () => {
    const onSubmit = vi.fn();
    const ui = chat(onSubmit);
    await ui.press('Hi', ' thera', KEY.backspace, 'e', KEY.enter);
    expect(onSubmit).toHaveBeenCalledWith('Hi there');
    expect(ui.frame()).toContain('› Ava is working…');

    await ui.press('x', KEY.enter);
    expect(onSubmit).toHaveBeenCalledTimes(1);

    await ui.emit({ type: 'user', text: 'Hi there' }, { type: 'reply', node: 'start1', text: 'Hello.' });
    expect(ui.frame()).toMatch(/› █/);
  });

  it('submits keys typed ahead of the terminal read, Enter included, dropping control characters', async () => {
    const onSubmit = vi.fn();
    const ui = chat(onSubmit);
    await ui.press('my\u0007 bill\r');
    expect(onSubmit).toHaveBeenCalledWith('my bill');
  });

  it('takes a paste as text, its Tabs and line breaks as spaces, and waits for Enter to send it', async () => {
    const onSubmit = vi.fn();
    const ui = chat(onSubmit);
    await ui.press('\u001B[200~my\tbill\nis wrong\n\u001B[201~');
    expect(ui.frame()).toContain('› my bill is wrong █');
    expect(onSubmit).not.toHaveBeenCalled();
    await ui.press(KEY.enter);
    expect(onSubmit).toHaveBeenCalledWith('my bill is wrong');
  });

  it('is disabled while the agent works and after the conversation ends', async () => {
    const ui = chat();
    await ui.emit({ type: 'run.started', graph: 'support', nodes: 6, version: 0 });
    expect(ui.frame()).toContain('› Ava is working…');
    await ui.emit({ type: 'transition', from: 'answer', to: 'quit', kind: 'quit' });
    expect(ui.frame()).toContain('› the conversation has ended');
  });
});
