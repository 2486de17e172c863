import { Box, Text } from 'ink';
import { memo } from 'react';
import type { GoalSpend } from '../../../events.js';
import { useTheme } from '../../theme.js';
import { endText, spendFigures } from '../labels.js';
import type { GoalEnd } from '../view-state.js';

export interface RunEndProps {
  end: GoalEnd;
  spend: GoalSpend;
  model: string;
  scripted: boolean;
}

/** Why the run ended, its detail, and what it spent. */
export const RunEnd = memo(function RunEnd({ end, spend, model, scripted }: RunEndProps) {
  const theme = useTheme();
  const figures = spendFigures(spend, model, scripted);
  const done = end.reason === 'task_complete';
  return (
    <Box flexDirection="column" marginTop={1}>
      <Text {...(done ? theme.ok : theme.warn)}>{`■ run ended: ${endText(end.reason)}`}</Text>
      {end.detail ? <Text>{`  ${end.detail}`}</Text> : null}
      <Text {...theme.muted}>
        {`  spent: ${figures.steps} steps · ${figures.tokens} tokens · cost ${figures.cost} · ${figures.time}`}
      </Text>
    </Box>
  );
});
