import { Box, Text } from 'ink';
import { memo } from 'react';
import { useTheme } from '../../theme.js';
import { oneLine } from '../../text.js';
import type { FlowChangeView } from '../view-state.js';

export interface FlowChangesProps {
  changes: readonly FlowChangeView[];
  /** Changes listed, the latest; earlier ones are counted. Default: all. */
  shown?: number;
}

/**
 * The pass's temporary changes, one short line each: `+ by: add node extra`, or
 * `✗ by: add edge a → b (refused: it would close a cycle)`.
 */
export const FlowChanges = memo(function FlowChanges({ changes, shown }: FlowChangesProps) {
  const theme = useTheme();
  if (changes.length === 0) return null;
  const listed = shown === undefined ? changes : changes.slice(-shown);
  const earlier = changes.length - listed.length;
  return (
    <Box flexDirection="column">
      <Text wrap="truncate-end">
        <Text {...theme.heading}>{`Temporary changes (${changes.length})`}</Text>
        {earlier > 0 ? <Text {...theme.muted}>{` · ${earlier} earlier not shown`}</Text> : null}
      </Text>
      {listed.map((change, i) => (
        <Text key={earlier + i} wrap="truncate-end">
          <Text {...(change.applied ? theme.added : theme.removed)}>{change.applied ? '  + ' : '  ✗ '}</Text>
          {oneLine(`${change.by}: ${change.change}`, 400)}
          {change.applied ? null : (
            <Text
              {...theme.muted}
            >{` (refused${change.reason ? `: ${oneLine(change.reason, 400)}` : ''})`}</Text>
          )}
        </Text>
      ))}
    </Box>
  );
});
