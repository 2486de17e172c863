import { useInput, usePaste, useStdin } from 'ink';
import { useEffect, useRef, useState } from 'react';
import type { Approval } from '../../autonomous/authorize.js';
import { editDraft } from './approval-input.js';

export interface ApprovalKeysOptions {
  /** A question is on screen: typed keys edit the answer line. */
  asking: boolean;
  /** Keys are read at all (false once the run is over). */
  active: boolean;
  onAnswer: (approval: Approval) => void;
  /**
   * Ctrl+C. The view reads keys in raw mode, where the terminal sends Ctrl+C as a key instead of
   * signalling SIGINT, so the view passes it on (by default as SIGINT to this process, which the CLI
   * handles).
   */
  onCtrlC: () => void;
}

/**
 * The answer line driven by keys and pastes. Keys are read only where stdin supports raw mode;
 * elsewhere (a pipe) the view still follows the run, it just cannot answer.
 */
export function useApprovalKeys({ asking, active, onAnswer, onCtrlC }: ApprovalKeysOptions): string {
  const [draft, setDraft] = useState('');
  // Keys can arrive faster than React re-renders, so each one must see the draft the last one left.
  const latest = useRef(draft);
  const { isRawModeSupported } = useStdin();
  const update = (next: string) => {
    latest.current = next;
    setDraft(next);
  };
  const isActive = isRawModeSupported === true && active;
  // A question answered or withdrawn takes its half-typed answer with it.
  useEffect(() => {
    if (!asking) update('');
  }, [asking]);
  useInput(
    (input, key) => {
      if (key.ctrl && input === 'c') return onCtrlC();
      if (!asking) return;
      const edited = editDraft(latest.current, input, key);
      update(edited.draft);
      if (edited.answer) onAnswer(edited.answer);
    },
    { isActive },
  );
  usePaste(
    (text) => {
      if (asking) update(editDraft(latest.current, text.replace(/[\r\n]+$/, ''), {}).draft);
    },
    { isActive },
  );
  return asking ? draft : '';
}
