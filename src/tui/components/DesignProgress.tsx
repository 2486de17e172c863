import { Box, Text } from 'ink';
import Spinner from 'ink-spinner';
import { memo } from 'react';
import type { DesignStage } from '../stages.js';
import { MIN_SCROLL_HEIGHT, scrollWindow } from '../scroll.js';
import { tailLines } from '../text.js';
import { useTheme, type Role } from '../theme.js';
import { MoreLine, PanelTitle } from './PanelTitle.js';

export interface DesignProgressProps {
  stages: readonly DesignStage[];
  height: number;
  width: number;
}

/** Lines kept for the streamed text when the stage list is long. */
const MIN_STREAM_LINES = 3;

/**
 * Each designer stage with its state (a spinner while it runs), retries with their reasons, and the
 * last lines the model streamed for the stage now running.
 */
export const DesignProgress = memo(function DesignProgress({ stages, height, width }: DesignProgressProps) {
  const theme = useTheme();
  const lines = stages.flatMap(stageLines);
  const active = stages.findLast((s) => s.status === 'running' || s.status === 'retry');
  // Below the title: the stage list, then (while a stage runs) a heading and the streamed text. The
  // text gets what the list leaves, at least a few lines, but never so much that the list cannot scroll.
  const room = height - 1;
  const streamBudget = active
    ? Math.max(Math.min(Math.max(room - 1 - lines.length, MIN_STREAM_LINES), room - 1 - MIN_SCROLL_HEIGHT), 0)
    : 0;
  const listHeight = room - (active ? streamBudget + 1 : 0);
  const activeLine = active ? lines.findIndex((l) => l.stage === active.name) : lines.length - 1;
  const list = scrollWindow(lines.length, activeLine, listHeight);
  const tail = active ? tailLines(active.text, width - 4, streamBudget) : { lines: [], hidden: 0 };
  return (
    <Box flexDirection="column" height={height} overflow="hidden">
      <PanelTitle title="Design" note={summary(stages)} focused={false} />
      {list.above > 0 ? <MoreLine count={list.above} up /> : null}
      {lines.slice(list.start, list.end).map((line, i) => (
        <Text key={list.start + i} wrap="truncate-end" {...(line.role ? theme[line.role] : {})}>
          {line.spinner ? <Spinner type="dots" /> : null}
          {line.text}
        </Text>
      ))}
      {list.below > 0 ? <MoreLine count={list.below} up={false} /> : null}
      {active ? (
        <Box flexDirection="column">
          <Text {...theme.muted} wrap="truncate-end">
            {`  ── ${active.name}: model output${tail.hidden > 0 ? ` (last ${tail.lines.length} lines)` : ''} ──`}
          </Text>
          {tail.lines.map((line, i) => (
            <Text key={i} wrap="truncate-end">{`  ${line}`}</Text>
          ))}
        </Box>
      ) : null}
    </Box>
  );
});

interface StageLine {
  stage: string;
  text: string;
  spinner?: boolean;
  role?: Role;
}

/** The stage's own line, then one line per retry or failure reason. */
function stageLines(stage: DesignStage): StageLine[] {
  const detail = stage.detail ? ` · ${stage.detail}` : '';
  const head: StageLine = (() => {
    switch (stage.status) {
      case 'running':
        return { stage: stage.name, text: ` ${stage.name}  running${detail}`, spinner: true };
      case 'retry':
        return {
          stage: stage.name,
          text: ` ${stage.name}  retry ${stage.retries}${detail}`,
          spinner: true,
          role: 'warn',
        };
      case 'done':
        return { stage: stage.name, text: `✓ ${stage.name}  done${detail}`, role: 'ok' };
      case 'fail':
        return { stage: stage.name, text: `✗ ${stage.name}  failed${detail}`, role: 'error' };
    }
  })();
  const reasons = stage.reasons.map((reason, i) => ({
    stage: stage.name,
    text: `    ${stage.status === 'fail' && i === stage.reasons.length - 1 ? 'failed' : `retry ${i + 1}`}: ${reason}`,
    role: 'muted' as const,
  }));
  return [head, ...reasons];
}

/** `3/5 stages done · 2 retries`. */
function summary(stages: readonly DesignStage[]): string {
  const done = stages.filter((s) => s.status === 'done').length;
  const retries = stages.reduce((n, s) => n + s.retries, 0);
  return `${done}/${stages.length} stages done${retries > 0 ? ` · ${retries} retr${retries === 1 ? 'y' : 'ies'}` : ''}`;
}
