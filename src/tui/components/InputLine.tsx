import { Text } from 'ink';
import { memo } from 'react';
import { useTheme } from '../theme.js';

export interface InputLineProps {
  value: string;
  /** The agent waits for the user; otherwise the line says why it cannot be typed into. */
  enabled: boolean;
  focused: boolean;
  /** Shown instead of the value while the line is disabled. */
  reason: string;
}

/** The reply line: `› text█` while it has focus, the draft and a hint otherwise. */
export const InputLine = memo(function InputLine({ value, enabled, focused, reason }: InputLineProps) {
  const theme = useTheme();
  if (!enabled) return <Text {...theme.muted} wrap="truncate-start">{`› ${reason}`}</Text>;
  return (
    // Truncate from the start so the end of a long draft, where the cursor is, stays visible.
    <Text wrap="truncate-start">
      <Text {...(focused ? theme.focus : theme.muted)}>{'› '}</Text>
      {value}
      {focused ? (
        <Text {...theme.muted}>█</Text>
      ) : (
        <Text {...theme.muted}>{value ? '  (Tab to edit)' : 'Tab to type a reply'}</Text>
      )}
    </Text>
  );
});
