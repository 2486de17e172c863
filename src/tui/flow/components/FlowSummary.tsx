import { Text } from 'ink';
import { memo } from 'react';
import { formatElapsed } from '../../format.js';
import { useTheme } from '../../theme.js';
import { tokensText } from '../node-lines.js';
import type { FlowEnd } from '../view-state.js';

/**
 * `■ pass 1 ended: 5 done · 1 failed · 1 reused · 1 blocked · 1,234 tokens · saved 340 tokens · 4.2s`;
 * counts of none are left out.
 */
export const FlowSummary = memo(function FlowSummary({ end }: { end: FlowEnd }) {
  const theme = useTheme();
  const counts = [
    `${end.done} done`,
    ...(end.failed > 0 ? [`${end.failed} failed`] : []),
    ...(end.reused > 0 ? [`${end.reused} reused`] : []),
    ...(end.blocked > 0 ? [`${end.blocked} blocked`] : []),
    tokensText(end.tokens),
    ...(end.savedTokens > 0 ? [`saved ${tokensText(end.savedTokens)}`] : []),
    seconds(end.ms),
  ];
  const clean = end.failed === 0 && end.blocked === 0;
  return (
    <Text {...(clean ? theme.ok : theme.warn)} wrap="truncate-end">
      {`■ pass ${end.pass} ended: ${counts.join(' · ')}`}
    </Text>
  );
});

/** `4.2s` under a minute, `1m 05s` from there. */
function seconds(ms: number): string {
  return ms < 60_000 ? `${(Math.max(ms, 0) / 1000).toFixed(1)}s` : formatElapsed(ms);
}
