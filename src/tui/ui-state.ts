/**
 * What the user has done to the view (focus, selection, scroll, folds, the draft reply) and how keys
 * and pastes change it. Pure functions of (state, input, context) so every binding is testable without
 * a terminal; `use-keyboard.ts` performs the two effects a key can have: submitting and quitting.
 */
import type { Key } from 'ink';

/** The panels Tab moves between. */
export type Panel = 'input' | 'graph' | 'inspector' | 'history';

export interface UiState {
  focus: Panel;
  /** The node the user picked; undefined follows the current node. */
  selected?: string;
  /** First inspector line shown. */
  inspectorScroll: number;
  /** Selected version, counted from the newest. */
  historyIndex: number;
  /** What the right-hand column shows: whichever of the two had focus last. */
  side: 'inspector' | 'history';
  showDecisions: boolean;
  help: boolean;
  draft: string;
}

/** What a key handler needs to know about the run and the layout. */
export interface KeyContext {
  /** Panels in Tab order; the first one has focus at the start. */
  panels: readonly Panel[];
  /** Node names in the order the graph panel lists them. */
  order: readonly string[];
  current?: string;
  historyLength: number;
  /** The input line takes text (the agent is waiting for the user). */
  inputEnabled: boolean;
}

/** What the caller must do after a key: nothing, hand over the reply, or quit (`q`, or Ctrl+C: interrupted). */
export type KeyEffect = { kind: 'submit'; text: string } | { kind: 'quit'; interrupted: boolean } | undefined;

const PAGE = 10;

/** The state before any key: focus on the first panel, following the current node. */
export function initialUiState(panels: readonly Panel[]): UiState {
  return {
    focus: panels[0] ?? 'graph',
    inspectorScroll: 0,
    historyIndex: 0,
    side: 'inspector',
    showDecisions: false,
    help: false,
    draft: '',
  };
}

/** The node the inspector shows: the user's pick while it exists, else the current node, else the first. */
export function selectedNode(ui: UiState, ctx: Pick<KeyContext, 'order' | 'current'>): string | undefined {
  if (ui.selected !== undefined && ctx.order.includes(ui.selected)) return ui.selected;
  return ctx.current ?? ctx.order[0];
}

/**
 * Applies what one read of the terminal delivered. Keys typed faster than the terminal is read arrive
 * as one input, and Ink parses only the whole of it as a key, so two Tabs would be no key at all. A
 * paste comes separately (see {@link handlePaste}), so a Tab here was pressed: the input is split at
 * each Tab and the pieces are applied in turn, each Tab moving focus once. Stops at a quit.
 */
export function handleInput(
  ui: UiState,
  input: string,
  key: Key,
  ctx: KeyContext,
): { ui: UiState; effects: NonNullable<KeyEffect>[] } {
  const presses: [string, Key][] =
    input.length > 1 && input.includes('\t')
      ? input
          .split(/(\t)/)
          .filter((piece) => piece !== '')
          .map((piece) => pressOf(piece, key))
      : [[input, key]];
  const effects: NonNullable<KeyEffect>[] = [];
  let state = ui;
  let context = ctx;
  for (const [text, pressed] of presses) {
    const { ui: next, effect } = handleKey(state, text, pressed, context);
    state = next;
    if (!effect) continue;
    effects.push(effect);
    if (effect.kind === 'quit') break;
    // The reply is handed over: the rest of the keys must not type into a line that is now closed.
    context = { ...context, inputEnabled: false };
  }
  return { ui: state, effects };
}

/** A piece of a split input as the key it is: a Tab, an Enter, or text typed ahead. */
function pressOf(piece: string, key: Key): [string, Key] {
  if (piece === '\t') return ['', { ...key, tab: true }];
  if (piece === '\r' || piece === '\n') return ['', { ...key, return: true }];
  return [piece, key];
}

/**
 * Applies pasted text: it goes into the reply line as it is, its line breaks and Tabs as spaces, and
 * sends nothing (a paste that ends in a newline is still waiting for Enter).
 */
export function handlePaste(ui: UiState, text: string, ctx: KeyContext): UiState {
  if (ui.help || ui.focus !== 'input' || !ctx.inputEnabled) return ui;
  return { ...ui, draft: ui.draft + printable(text.replace(/\r\n|[\r\n\t]/g, ' ')) };
}

/** Applies one key press. */
function handleKey(
  ui: UiState,
  input: string,
  key: Key,
  ctx: KeyContext,
): { ui: UiState; effect?: KeyEffect } {
  if (key.ctrl && input === 'c') return { ui, effect: { kind: 'quit', interrupted: true } };
  if (ui.help) {
    if (input === 'q') return { ui, effect: { kind: 'quit', interrupted: false } };
    if (input === '?' || key.escape || key.return) return { ui: { ...ui, help: false } };
    return { ui };
  }
  if (key.tab) return { ui: cycleFocus(ui, ctx.panels, key.shift ? -1 : 1) };
  if (ui.focus === 'input' && ctx.inputEnabled) return editDraft(ui, input, key);
  if (input === 'q') return { ui, effect: { kind: 'quit', interrupted: false } };
  if (input === '?') return { ui: { ...ui, help: true } };
  if (input === 't') return { ui: { ...ui, showDecisions: !ui.showDecisions } };
  if (ui.focus === 'history') return { ui: moveHistory(ui, key, ctx.historyLength) };
  if (ui.focus === 'inspector' && (key.pageUp || key.pageDown))
    return {
      ui: { ...ui, inspectorScroll: Math.max(ui.inspectorScroll + (key.pageDown ? PAGE : -PAGE), 0) },
    };
  if (key.escape) return { ui: { ...ui, selected: undefined, inspectorScroll: 0 } };
  if (key.return && ui.focus === 'graph' && ctx.panels.includes('inspector'))
    return { ui: { ...ui, focus: 'inspector', side: 'inspector' } };
  return { ui: moveSelection(ui, key, ctx) };
}

function cycleFocus(ui: UiState, panels: readonly Panel[], step: number): UiState {
  if (panels.length === 0) return ui;
  const at = panels.indexOf(ui.focus);
  const focus = panels[(at + step + panels.length) % panels.length]!;
  return { ...ui, focus, side: focus === 'history' || focus === 'inspector' ? focus : ui.side };
}

function editDraft(ui: UiState, input: string, key: Key): { ui: UiState; effect?: KeyEffect } {
  if (key.return) {
    const text = ui.draft.trim();
    if (!text) return { ui };
    return { ui: { ...ui, draft: '' }, effect: { kind: 'submit', text } };
  }
  if (key.backspace || key.delete) return { ui: { ...ui, draft: [...ui.draft].slice(0, -1).join('') } };
  if (key.ctrl && input === 'u') return { ui: { ...ui, draft: '' } };
  if (key.ctrl || key.meta || key.escape || !input) return { ui };
  // Keys typed faster than they are read arrive as one input, Enter included: a trailing Enter submits.
  const submits = input.length > 1 && /[\r\n]$/.test(input);
  // Line breaks elsewhere (a paste on a terminal without bracketed paste) become spaces.
  const text = printable((submits ? input.replace(/[\r\n]+$/, '') : input).replace(/\r\n|\r|\n/g, ' '));
  const next = { ...ui, draft: ui.draft + text };
  return submits ? editDraft(next, '', { ...key, return: true }) : { ui: next };
}

/** `text` without control characters, which would be invisible in the reply line. */
function printable(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what this removes
  return text.replace(/[\u0000-\u001F\u007F]/g, '');
}

function moveHistory(ui: UiState, key: Key, length: number): UiState {
  const to = navigate(key, Math.min(ui.historyIndex, Math.max(length - 1, 0)), length);
  return to === undefined ? ui : { ...ui, historyIndex: to };
}

function moveSelection(ui: UiState, key: Key, ctx: KeyContext): UiState {
  const { order } = ctx;
  const from = selectedNode(ui, ctx);
  const to = navigate(key, from === undefined ? 0 : Math.max(order.indexOf(from), 0), order.length);
  const selected = to === undefined ? undefined : order[to];
  if (selected === undefined || selected === ui.selected) return ui;
  return { ...ui, selected, inspectorScroll: 0 };
}

/** Where a navigation key moves index `at` of a list of `length`; undefined for any other key. */
function navigate(key: Key, at: number, length: number): number | undefined {
  if (length === 0) return undefined;
  let to: number;
  if (key.upArrow) to = at - 1;
  else if (key.downArrow) to = at + 1;
  else if (key.pageUp) to = at - PAGE;
  else if (key.pageDown) to = at + PAGE;
  else if (key.home) to = 0;
  else if (key.end) to = length - 1;
  else return undefined;
  return Math.min(Math.max(to, 0), length - 1);
}
