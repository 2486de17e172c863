import { Box, Static, Text } from 'ink';
import { useSyncExternalStore } from 'react';
import { useTerminalSize, type TerminalSize } from '../layout-size.js';
import { useTheme } from '../theme.js';
import { useElapsed } from '../use-elapsed.js';
import { FlowChanges } from './components/FlowChanges.js';
import { FlowHeader } from './components/FlowHeader.js';
import { FlowNodeList } from './components/FlowNodeList.js';
import { FlowReportView } from './components/FlowReportView.js';
import { FlowStatusBar } from './components/FlowStatusBar.js';
import type { FlowStore } from './flow-store.js';

/** Temporary changes listed while the pass runs; the report at its end lists them all. */
const CHANGES_SHOWN = 3;

export interface FlowLayoutProps {
  store: FlowStore;
  /** The model that answers the nodes. */
  model: string;
  scripted: boolean;
  /** Where the run's state is saved, as the user would type it. */
  savedTo?: string;
  /** Fixes the terminal size instead of following the real one. */
  size?: TerminalSize;
  now?: () => number;
}

/**
 * A flow pass. Redrawn while it runs: the header, the node list fitted to the terminal, the latest
 * temporary changes; once it ends, its report (every node, every change, the summary) is printed once
 * above, through `<Static>`. The status bar stays at the bottom throughout. It reads no keys.
 */
export function FlowLayout({ store, model, scripted, savedTo, size, now }: FlowLayoutProps) {
  const theme = useTheme();
  const { view, closed, startedAt, closedAt } = useSyncExternalStore(store.subscribe, store.getState);
  const { columns, rows } = useTerminalSize(size);
  const ticking = useElapsed(startedAt, now);
  const elapsedMs = view.ended?.ms ?? (closedAt !== undefined ? closedAt - startedAt : ticking);
  const live = !view.ended;
  const changeLines = view.changes.length === 0 ? 0 : Math.min(view.changes.length, CHANGES_SHOWN) + 1;
  const stopped = closed && live && view.started;
  // The live region stays shorter than the terminal: header, changes, the stopped line, the status bar
  // (two lines with a state file) and the cursor's line below it take their share first.
  const listHeight = rows - 1 - 1 - changeLines - (stopped ? 1 : 0) - (savedTo ? 2 : 1);
  const done = view.nodes.filter((node) => node.status === 'done' || node.status === 'reused').length;
  return (
    // As wide as the terminal it was given (a fixed size included), so lines truncate at its edge.
    <Box flexDirection="column" width={columns}>
      <Static items={view.reports}>
        {(report) => (
          <FlowReportView
            key={report.id}
            report={report}
            width={columns}
            {...(view.attempts !== undefined && { attempts: view.attempts })}
          />
        )}
      </Static>
      {live ? (
        <Box flexDirection="column">
          <FlowHeader
            flow={view.flow}
            {...(view.pass !== undefined && { pass: view.pass })}
            {...(view.concurrency !== undefined && { concurrency: view.concurrency })}
            resumed={view.resumed}
          />
          <FlowNodeList
            nodes={view.nodes}
            width={columns}
            height={listHeight}
            {...(view.attempts !== undefined && { attempts: view.attempts })}
            still={closed}
          />
          <FlowChanges changes={view.changes} shown={CHANGES_SHOWN} />
          {stopped ? (
            <Text {...theme.warn} wrap="truncate-end">
              {`■ pass ${view.pass ?? ''} stopped before its end: running it again goes on from its last finished step`}
            </Text>
          ) : null}
        </Box>
      ) : null}
      <FlowStatusBar
        {...(view.step !== undefined && { step: view.step })}
        done={done}
        total={view.nodes.length}
        tokens={view.tokens}
        elapsedMs={elapsedMs}
        model={model}
        scripted={scripted}
        {...(savedTo !== undefined && { savedTo })}
        width={columns}
      />
    </Box>
  );
}
