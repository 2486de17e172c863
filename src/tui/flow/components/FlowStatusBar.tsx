import { Box, Text } from 'ink';
import { memo } from 'react';
import { formatCount, formatElapsed } from '../../format.js';
import { useTheme } from '../../theme.js';

export interface FlowStatusBarProps {
  step?: number;
  /** Nodes with an output (done or reused), and all the pass's nodes. */
  done: number;
  total: number;
  tokens: number;
  elapsedMs: number;
  model: string;
  /** The scripted provider answers: the bar must say so. */
  scripted: boolean;
  /** Where the run's state is saved, as the user would type it. */
  savedTo?: string;
  width: number;
}

/**
 * `step 2 · 3/7 done · tokens 1,234 · time 4s · MODEL [scripted]`, then where the run is saved. On a
 * terminal too narrow for it the figures lose their words first, so the model and `[scripted]` stay.
 */
export const FlowStatusBar = memo(function FlowStatusBar(props: FlowStatusBarProps) {
  const theme = useTheme();
  const { step, done, total, tokens, elapsedMs, model, scripted, savedTo, width } = props;
  const tail = `${model}${scripted ? ' [scripted]' : ''}`;
  const full = `step ${step ?? 0} · ${done}/${total} done · tokens ${formatCount(tokens)} · time ${formatElapsed(elapsedMs)} · `;
  const short = `${step ?? 0} · ${done}/${total} · ${formatCount(tokens)} tok · ${formatElapsed(elapsedMs)} · `;
  const figures = [full, short].find((text) => text.length + tail.length <= width) ?? `${done}/${total} · `;
  return (
    <Box flexDirection="column">
      <Text wrap="truncate-end">
        {figures}
        <Text {...theme.heading}>{model}</Text>
        {scripted ? <Text {...theme.warn}> [scripted]</Text> : null}
      </Text>
      {savedTo ? <Text {...theme.muted} wrap="truncate-start">{`saved to ${savedTo}`}</Text> : null}
    </Box>
  );
});
