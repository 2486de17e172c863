import { Box, Text } from 'ink';
import Spinner from 'ink-spinner';
import { memo } from 'react';
import { useTheme } from '../../theme.js';
import {
  FLOW_MARKS,
  FLOW_ROLES,
  STOPPED_MARK,
  foldText,
  isAsking,
  nodeRows,
  statusText,
} from '../node-lines.js';
import type { FlowNodeView } from '../view-state.js';

/** Widest the name column grows (and at most a third of the width); longer names push their status right. */
const NAME_COLUMN = 24;

export interface FlowNodeListProps {
  nodes: readonly FlowNodeView[];
  width: number;
  /** Lines the list may take; it folds and cuts itself to fit. */
  height: number;
  /** The flow's `attempts`, when known. */
  attempts?: number;
  /** The pass is over: nothing runs, so nothing spins. */
  still: boolean;
}

/**
 * One line per node, in the flow's order: its marker (a spinner while it is asked), its name, where it
 * stands; under a node being asked, the last lines of its answer as it streams in.
 */
export const FlowNodeList = memo(function FlowNodeList(props: FlowNodeListProps) {
  const { nodes, width, height, attempts, still } = props;
  const theme = useTheme();
  const longest = Math.max(0, ...nodes.map((node) => shownName(node).length));
  const column = Math.min(longest, NAME_COLUMN, Math.floor(width / 3));
  return (
    <Box flexDirection="column">
      {nodeRows(nodes, width, height).map((row, i) => {
        switch (row.kind) {
          case 'fold':
            return (
              <Text key={`fold-${i}`} wrap="truncate-end">
                <Text {...theme[FLOW_ROLES[row.status]]}>{`${FLOW_MARKS[row.status]} `}</Text>
                <Text {...theme.muted}>{foldText(row.status, row.names)}</Text>
              </Text>
            );
          case 'more':
            return (
              <Text
                key="more"
                {...theme.muted}
              >{`… ${row.count} more node${row.count === 1 ? '' : 's'}`}</Text>
            );
          case 'node': {
            const { node } = row;
            const stopped = still && isAsking(node);
            const role = stopped ? 'warn' : FLOW_ROLES[node.status];
            return (
              <Box key={`node:${node.key}`} flexDirection="column">
                <Text wrap="truncate-end">
                  <Text {...theme[role]}>
                    {node.status === 'running' && !still ? (
                      <Spinner type="dots" />
                    ) : stopped ? (
                      STOPPED_MARK
                    ) : (
                      FLOW_MARKS[node.status]
                    )}
                  </Text>
                  {` ${shownName(node).padEnd(column)}  `}
                  <Text {...(node.status === 'pending' ? theme.muted : theme[role])}>
                    {statusText(node, attempts, stopped)}
                  </Text>
                </Text>
                {stopped
                  ? null
                  : row.live.map((line, j) => (
                      <Text key={j} wrap="truncate-end">
                        <Text {...theme.muted}>{'    │ '}</Text>
                        {line}
                      </Text>
                    ))}
              </Box>
            );
          }
        }
      })}
    </Box>
  );
});

/** The name, marked when the node is temporary. */
function shownName(node: FlowNodeView): string {
  return node.temporary ? `${node.name} (temporary)` : node.name;
}
