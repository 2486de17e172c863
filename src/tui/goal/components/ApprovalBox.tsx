import { Box, Text } from 'ink';
import { memo } from 'react';
import { useTheme } from '../../theme.js';
import type { ShownRequest } from '../goal-store.js';
import { wrapText } from '../../text.js';

/** Lines of each argument's value shown in the box. */
const ARG_LINES = 4;

export interface ApprovalBoxProps {
  request: ShownRequest;
  /** What the user has typed so far. */
  draft: string;
  width: number;
}

/** The command waiting for the user: its arguments, why it is asked, the answers, and the answer line. */
export const ApprovalBox = memo(function ApprovalBox({ request, draft, width }: ApprovalBoxProps) {
  const theme = useTheme();
  const inner = Math.max(width - 4, 10);
  return (
    <Box flexDirection="column">
      <Box flexDirection="column" borderStyle="round" paddingX={1} width={width}>
        <Text {...theme.heading} wrap="truncate-end">{`Step ${request.step}: run ${request.command}?`}</Text>
        <Text {...theme.muted}>{request.reason}</Text>
        {request.args.map((arg) => {
          const lines = wrapText(arg.value, inner - 2);
          const shown = lines.slice(0, ARG_LINES);
          const more = lines.length - shown.length;
          const inline = lines.length === 1 && arg.name.length + 2 + arg.value.length <= inner;
          return (
            <Box key={arg.name} flexDirection="column">
              <Text wrap="truncate-end">
                <Text {...theme.focus}>{`${arg.name}:`}</Text>
                {inline ? ` ${arg.value}` : ''}
              </Text>
              {inline ? null : shown.map((line, i) => <Text key={i} wrap="truncate-end">{`  ${line}`}</Text>)}
              {more > 0 ? (
                <Text {...theme.muted}>{`  … ${more} more line${more === 1 ? '' : 's'}`}</Text>
              ) : null}
            </Box>
          );
        })}
        <Text {...theme.muted}>
          {`y run · n stop the run · y -N run the next N without asking · a always allow ${request.command} in this workspace · or type feedback for the model, then Enter`}
        </Text>
      </Box>
      <Text wrap="truncate-start">
        <Text {...theme.focus}>{'› '}</Text>
        {draft}
        <Text {...theme.muted}>█</Text>
      </Text>
    </Box>
  );
});
