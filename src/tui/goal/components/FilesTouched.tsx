import { Box, Text } from 'ink';
import { memo } from 'react';
import type { FileTouch } from '../../../events.js';
import { useTheme } from '../../theme.js';

/** Files listed; earlier ones are counted. */
const SHOWN_FILES = 5;

/** The workspace files touched so far, the latest last, each with its last change. */
export const FilesTouched = memo(function FilesTouched({ files }: { files: readonly FileTouch[] }) {
  const theme = useTheme();
  if (files.length === 0) return null;
  const shown = files.slice(-SHOWN_FILES);
  const earlier = files.length - shown.length;
  return (
    <Box flexDirection="column" marginTop={1}>
      <Text {...theme.heading}>
        {`Workspace files (${files.length})`}
        {earlier > 0 ? <Text {...theme.muted}>{` · ${earlier} earlier not shown`}</Text> : null}
      </Text>
      {shown.map((file) => (
        <Text key={file.path} wrap="truncate-end">
          <Text {...changeStyle(theme, file.change)}>{`  ${file.change.padEnd(6)} `}</Text>
          {file.path}
        </Text>
      ))}
    </Box>
  );
});

function changeStyle(theme: ReturnType<typeof useTheme>, change: FileTouch['change']) {
  if (change === 'delete') return theme.removed;
  if (change === 'write' || change === 'append') return theme.added;
  return theme.muted;
}
