import { Box, Static, Text, useStdout } from 'ink';
import { memo, useEffect, useRef, useState } from 'react';
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
  /** Whether replies list their decisions or fold them to one line. */
  showDecisions: boolean;
  width: number;
  /** Terminal rows above the live region: what a redraw after a resize may fill without scrolling. */
  room: number;
}

/** Cursor to the top left, then erase to the end of the screen: what is in the scrollback stays. */
const ERASE_SCREEN = '\u001B[H\u001B[J';

/**
 * Finished messages, printed once above the live region through `<Static>`: they become terminal
 * scrollback and are never redrawn, except in two cases where what is on screen must change.
 *
 * A resize: the terminal rewraps what is on screen (a new width) or moves it (a new height), Ink's
 * frame among it, so Ink can no longer erase its last frame exactly and pieces of it would stay
 * behind. `t`: the replies on screen must fold or unfold their decisions, not only the ones to come.
 *
 * Either way the screen (not the scrollback) is erased and the messages that were on it are printed
 * again, at the new size and folding: nothing that was on screen is lost, and the scrollback gets no
 * copies (except where the terminal keeps an erased screen in its history, as tmux does). Replies that
 * had scrolled into the scrollback before stay as they were printed.
 */
export function Transcript({ entries, speakers, showDecisions, width, room }: TranscriptProps) {
  // Ink's own write: it takes its frame off, writes, and draws the frame again whole, so the erase
  // leaves Ink knowing what is on screen (a plain write would leave it redrawing only changed lines).
  const { write } = useStdout();
  const [redraw, setRedraw] = useState({ count: 0, from: 0 });
  const look = `${width}x${room}:${showDecisions ? 'open' : 'folded'}`;
  const drawn = useRef({ look, showDecisions });
  useEffect(() => {
    if (look === drawn.current.look) return;
    // The messages on screen are those that fit at the new size as they were drawn (folded or not).
    const from = tailThatFits(entries, { width, room, showDecisions: drawn.current.showDecisions, speakers });
    drawn.current = { look, showDecisions };
    write(ERASE_SCREEN);
    setRedraw((last) => ({ count: last.count + 1, from }));
    // Only a new size or folding redraws; the rest is read as it is then.
  }, [look]);
  return (
    // A new key mounts a new <Static>, which prints all its items again.
    <Static key={redraw.count} items={redraw.from > 0 ? entries.slice(redraw.from) : entries}>
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

interface Fit {
  width: number;
  room: number;
  showDecisions: boolean;
  speakers: Speakers;
}

/**
 * Index of the first of the last entries that fit in `room` rows (an estimate: one cell a character).
 * The last entry is always printed, even when it does not fit: the newest message matters most.
 */
function tailThatFits(entries: readonly TranscriptEntry[], fit: Fit): number {
  let rows = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    rows += entryRows(entries[i]!, fit);
    if (rows > fit.room) return Math.min(i + 1, entries.length - 1);
  }
  return 0;
}

/** Rows an entry takes: its line wrapped at the width, plus its decision lines. */
function entryRows(entry: TranscriptEntry, { width, showDecisions, speakers }: Fit): number {
  const text =
    entry.kind === 'error'
      ? `✗ error at node ${entry.node ?? ''}: ${entry.message}`
      : `${entry.kind === 'user' ? speakers.user : speakers.agent} › ${entry.text}`;
  const rows = text.split('\n').reduce((sum, line) => sum + Math.max(1, Math.ceil(line.length / width)), 0);
  if (entry.kind !== 'agent' || entry.decisions.length === 0) return rows;
  return rows + (showDecisions ? 1 + entry.decisions.length : 1);
}

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
