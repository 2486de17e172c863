import { Box, Text } from 'ink';
import Spinner from 'ink-spinner';
import { memo } from 'react';
import type { ReplyInProgress } from '../run-state.js';
import { oneLine, tailLines } from '../text.js';
import { useTheme } from '../theme.js';
import { Decisions } from './Transcript.js';

export interface LiveTurnProps {
  turn: ReplyInProgress;
  working: boolean;
  ended: boolean;
  /** The error the run stopped at: no reply will come, so nothing here says to wait for one. */
  failure?: string;
  /** The reply line has focus and takes text, so letters type instead of acting as keys. */
  typing: boolean;
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
  const { turn, working, current, agent, showDecisions, height, width } = props;
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
      ) : props.failure ? (
        <Text {...theme.error}>{oneLine(`✗ stopped by an error: ${props.failure}`, width)}</Text>
      ) : (
        <Text {...theme.muted} wrap="truncate-end">
          {idleText(props)}
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

/** What the agent waits for, and the keys that work from where the focus is. */
function idleText({ ended, typing }: Pick<LiveTurnProps, 'ended' | 'typing'>): string {
  if (ended) return '■ conversation ended · q quits';
  // `?` and `q` type themselves into the reply line: Tab leaves it for the panels, where they are keys.
  if (typing) return '· waiting for your reply · Enter: send · Tab: panels, where ?: help';
  return '· waiting for your reply · Tab: panels · ?: help · q: quit';
}
