import { Box, Text } from 'ink';
import { memo } from 'react';
import { LEGEND } from '../marks.js';
import { scrollWindow } from '../scroll.js';
import { useTheme } from '../theme.js';
import { MoreLine } from './PanelTitle.js';

export interface HelpOverlayProps {
  mode: 'chat' | 'design';
  height: number;
}

const COMMON: [string, string][] = [
  ['Tab / Shift+Tab', 'move between panels'],
  ['↑ ↓  PgUp PgDn  Home End', 'select a node (graph, inspector) or a version (history)'],
  ['Enter', 'inspect the selected node'],
  ['Esc', 'follow the current node again'],
  ['PgUp PgDn in the inspector', 'scroll its fields'],
  ['t', 'fold or unfold the decisions behind replies'],
  ['?', 'this help (Esc or ? closes it)'],
  ['q', 'quit (in the reply line it types a q)'],
  ['Ctrl+C', 'interrupt: quit from anywhere, exit status 130'],
];

const CHAT: [string, string][] = [
  ['Enter in the reply line', 'send your reply'],
  ['Ctrl+U', 'clear the reply line'],
];

/** Key bindings and the marker legend; on a terminal too short for them, the rest is counted below. */
export const HelpOverlay = memo(function HelpOverlay({ mode, height }: HelpOverlayProps) {
  const theme = useTheme();
  const keys = mode === 'chat' ? [...CHAT, ...COMMON] : COMMON;
  const width = Math.max(...keys.map(([k]) => k.length));
  const lines = [
    <Text key="keys" {...theme.heading}>
      Keys
    </Text>,
    ...keys.map(([k, what]) => (
      <Text key={k} wrap="truncate-end">
        <Text {...theme.focus}>{`  ${k.padEnd(width)}`}</Text>
        {`  ${what}`}
      </Text>
    )),
    <Text key="markers" {...theme.heading}>
      Markers
    </Text>,
    <Text key="legend" wrap="truncate-end">{`  ${LEGEND}`}</Text>,
  ];
  const view = scrollWindow(lines.length, 0, height);
  return (
    <Box flexDirection="column" height={height} overflow="hidden">
      {lines.slice(view.start, view.end)}
      {view.below > 0 ? <MoreLine count={view.below} up={false} /> : null}
    </Box>
  );
});
