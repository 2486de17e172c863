import { useApp, useInput, usePaste, useStdin } from 'ink';
import { useRef, useState } from 'react';
import {
  handleInput,
  handlePaste,
  initialUiState,
  type KeyContext,
  type KeyEffect,
  type UiState,
} from './ui-state.js';

/** What a layout hands the keyboard: the context keys are read in, and the two effects. */
export interface KeyboardOptions {
  context: KeyContext;
  onSubmit?: (text: string) => void;
  /** Called on `q` or Ctrl+C (`interrupted`), once the view has unmounted. */
  onQuit: (interrupted: boolean) => void;
}

/**
 * The view state driven by keys and pastes. Keys are read only where stdin supports raw mode;
 * elsewhere (a pipe) the view still follows the run, it just cannot be steered.
 */
export function useKeyboard({ context, onSubmit, onQuit }: KeyboardOptions): UiState {
  const { exit } = useApp();
  const [ui, setUi] = useState(() => initialUiState(context.panels));
  // Keys can arrive faster than React re-renders (a paste, key repeat), so each one must see the
  // state the previous one left, not the state of the last render.
  const latest = useRef(ui);
  const { isRawModeSupported } = useStdin();
  const update = (next: UiState) => {
    latest.current = next;
    setUi(next);
  };
  const perform = (effect: NonNullable<KeyEffect>) => {
    if (effect.kind === 'submit') onSubmit?.(effect.text);
    if (effect.kind === 'quit') {
      // Unmount first: the terminal is restored (raw mode off, cursor shown) before the caller, which
      // may save and exit the process at once, gets control.
      exit();
      onQuit(effect.interrupted);
    }
  };
  useInput(
    (input, key) => {
      const { ui: next, effects } = handleInput(latest.current, input, key, context);
      update(next);
      effects.forEach(perform);
    },
    { isActive: isRawModeSupported },
  );
  // With a paste on its own channel (bracketed paste), a Tab in typed input is a key press.
  usePaste((text) => update(handlePaste(latest.current, text, context)), { isActive: isRawModeSupported });
  return ui;
}
