import { Box, Static, Text } from 'ink';
import { memo } from 'react';
import { decisionText } from '../format.js';
import type { Decision, TranscriptEntry } from '../run-state.js';
import { useTheme } from '../theme.js';

/** Who is talking, as the graph's config names them. */
export interface Speakers {
  agent: string;
  user: string;
}

export interface TranscriptProps {
  entries: TranscriptEntry[];
  speakers: Speakers;
  /** Whether replies committed from now on list their decisions or fold them to one line. */
  showDecisions: boolean;
  width: number;
}

/**
 * Finished messages, printed once above the live region through `<Static>`: they become terminal
 * scrollback and are never redrawn. Scrollback cannot change, so `t` unfolds decisions for replies
 * printed after it is pressed (and for the turn in progress), not for ones already printed.
 */
export function Transcript({ entries, speakers, showDecisions, width }: TranscriptProps) {
  return (
    <Static items={entries}>
      {(entry) => (
        <TranscriptLine
          key={entry.id}
          entry={entry}
          speakers={speakers}
          showDecisions={showDecisions}
          width={width}
        />
      )}
    </Static>
  );
}

interface TranscriptLineProps {
  entry: TranscriptEntry;
  speakers: Speakers;
  showDecisions: boolean;
  width: number;
}

/** One message; memoised because it never changes once written. */
const TranscriptLine = memo(function TranscriptLine({
  entry,
  speakers,
  showDecisions,
  width,
}: TranscriptLineProps) {
  const theme = useTheme();
  switch (entry.kind) {
    case 'user':
      return (
        <Text>
          <Text {...theme.user}>{`${speakers.user} › `}</Text>
          {entry.text}
        </Text>
      );
    case 'agent':
      return (
        <Box flexDirection="column">
          <Text>
            <Text {...theme.agent}>{`${speakers.agent} › `}</Text>
            {entry.text}
          </Text>
          <Decisions decisions={entry.decisions} open={showDecisions} width={width} />
        </Box>
      );
    case 'error':
      return (
        <Text
          {...theme.error}
        >{`✗ error${entry.node !== undefined ? ` at node ${entry.node}` : ''}: ${entry.message}`}</Text>
      );
  }
});

export interface DecisionsProps {
  decisions: readonly Decision[];
  open: boolean;
  width: number;
  /** At most this many decision lines when open; earlier ones are counted in a "↑ N more" line. */
  limit?: number;
  /** Words after the count in the folded line, e.g. `so far`. */
  suffix?: string;
  /** Say that `t` unfolds them: only where pressing it changes what is shown. */
  hint?: boolean;
}

/** The decisions behind a reply: one folded line (`▸ 3 decisions`), or `▾` and one line each. */
export const Decisions = memo(function Decisions({
  decisions,
  open,
  width,
  limit,
  suffix,
  hint,
}: DecisionsProps) {
  const theme = useTheme();
  if (decisions.length === 0) return null;
  const count = `${decisions.length} decision${decisions.length === 1 ? '' : 's'}${suffix ? ` ${suffix}` : ''}`;
  if (!open) {
    const last = decisionText(decisions[decisions.length - 1]!, Math.max(width - count.length - 14, 10));
    const tail = hint ? '  (t unfolds)' : '';
    return <Text {...theme.muted} wrap="truncate-end">{`  ▸ ${count} · last: ${last}${tail}`}</Text>;
  }
  const shown = limit !== undefined ? decisions.slice(Math.max(decisions.length - limit, 0)) : decisions;
  const hidden = decisions.length - shown.length;
  return (
    <Box flexDirection="column">
      <Text
        {...theme.muted}
        wrap="truncate-end"
      >{`  ▾ ${count}${hidden > 0 ? ` (↑ ${hidden} more)` : ''}`}</Text>
      {shown.map((d, i) => (
        <Text key={hidden + i} {...theme.muted} wrap="truncate-end">
          {`    ${decisionText(d, width - 4)}`}
        </Text>
      ))}
    </Box>
  );
});
