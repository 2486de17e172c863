import { Box, Text } from 'ink';
import { memo } from 'react';
import type { GoalSpend } from '../../../events.js';
import { useTheme } from '../../theme.js';
import { spendFigures } from '../labels.js';

export interface GoalStatusBarProps {
  spend: GoalSpend;
  model: string;
  /** The scripted provider answers: the bar must say so. */
  scripted: boolean;
  /** The run file, as the user would type it. */
  savedTo: string;
}

/**
 * Two lines: `step 3/50 · tokens 1,234/10k · cost local · time 12s/5m 00s · model NAME [scripted]`,
 * then the run file.
 */
export const GoalStatusBar = memo(function GoalStatusBar(props: GoalStatusBarProps) {
  const theme = useTheme();
  const figures = spendFigures(props.spend, props.model, props.scripted);
  return (
    <Box flexDirection="column">
      <Text wrap="truncate-end">
        {`step ${figures.steps} · tokens ${figures.tokens} · cost ${figures.cost} · time ${figures.time} · `}
        <Text {...theme.heading}>{props.model}</Text>
        {props.scripted ? <Text {...theme.warn}> [scripted]</Text> : null}
      </Text>
      <Text {...theme.muted} wrap="truncate-start">{`run file: ${props.savedTo}`}</Text>
    </Box>
  );
});
