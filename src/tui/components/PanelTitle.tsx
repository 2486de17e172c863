import { Text } from 'ink';
import { memo } from 'react';
import { useTheme } from '../theme.js';

export interface PanelTitleProps {
  title: string;
  /** Shown after the title, dimmed: counts, edits, hints. */
  note?: string;
  focused: boolean;
}

/** A panel's one-line heading; `▸` marks the panel with keyboard focus, with or without colour. */
export const PanelTitle = memo(function PanelTitle({ title, note, focused }: PanelTitleProps) {
  const theme = useTheme();
  return (
    <Text wrap="truncate-end">
      <Text {...(focused ? theme.focus : theme.heading)}>{`${focused ? '▸' : ' '} ${title}`}</Text>
      {note ? <Text {...theme.muted}>{`  ${note}`}</Text> : null}
    </Text>
  );
});

/** A "↑ 12 more" / "↓ 40 more" line standing for the lines scrolled out of view. */
export const MoreLine = memo(function MoreLine({ count, up }: { count: number; up: boolean }) {
  const theme = useTheme();
  return <Text {...theme.muted}>{`  ${up ? '↑' : '↓'} ${count} more`}</Text>;
});
