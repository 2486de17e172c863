import { Box, Text } from 'ink';
import Spinner from 'ink-spinner';
import { memo } from 'react';
import type { ReplyInProgress } from '../run-state.js';
import { tailLines } from '../text.js';
import { useTheme } from '../theme.js';
import { Decisions } from './Transcript.js';

export interface LiveTurnProps {
  turn: ReplyInProgress;
  working: boolean;
  ended: boolean;
  current?: string;
  agent: string;
  showDecisions: boolean;
  /** Lines this region always takes, so the panels above it do not jump as it fills. */
  height: number;
  width: number;
}

/**
 * The reply being worked on: what the agent is doing, its decisions so far and the last lines of the
 * text it is streaming. Once the reply arrives it moves to the transcript and this region empties.
 */
export const LiveTurn = memo(function LiveTurn(props: LiveTurnProps) {
  const { turn, working, ended, current, agent, showDecisions, height, width } = props;
  const theme = useTheme();
  const decisionLines =
    turn.decisions.length === 0 ? 0 : showDecisions ? 1 + Math.min(turn.decisions.length, 3) : 1;
  const textLines = Math.max(height - 1 - decisionLines, 0);
  const streamed = turn.thinking ? turn.thinking.text : turn.streamed;
  const tail = tailLines(streamed, width - 4, textLines);
  return (
    <Box flexDirection="column" height={height} overflow="hidden">
      {working ? (
        <Text wrap="truncate-end">
          <Text {...theme.focus}>
            <Spinner type="dots" />
          </Text>
          {` ${agent} is working${current !== undefined ? ` · at ${current}` : ''}${turn.thinking ? ' · thinking' : ''}`}
        </Text>
      ) : (
        <Text {...theme.muted} wrap="truncate-end">
          {ended ? '■ conversation ended · q quits' : `· waiting for your reply · Tab: panels · ?: help`}
        </Text>
      )}
      <Decisions
        decisions={turn.decisions}
        open={showDecisions}
        width={width}
        limit={3}
        suffix="so far"
        hint
      />
      {tail.hidden > 0 && textLines > 0 ? (
        <Text {...theme.muted}>{`  ↑ ${tail.hidden} more line${tail.hidden === 1 ? '' : 's'}`}</Text>
      ) : null}
      {tail.lines.slice(tail.hidden > 0 ? 1 : 0).map((line, i) => (
        <Text key={i} wrap="truncate-end">{`  ${line}`}</Text>
      ))}
    </Box>
  );
});
