import { Box, Text } from 'ink';
import { memo } from 'react';
import { editSummary } from '../format.js';
import type { GraphEdge, GraphLayout, GraphRow } from '../graph-layout.js';
import { nodeMarks, type MarkSource, type NodeMarks } from '../marks.js';
import type { RunState } from '../run-state.js';
import { scrollWindow } from '../scroll.js';
import { useTheme } from '../theme.js';
import { MoreLine, PanelTitle } from './PanelTitle.js';

export interface GraphPanelProps extends MarkSource {
  graphName: string;
  layout: GraphLayout;
  /** The selected node; the panel scrolls to keep it (else the current node) in view. */
  selected?: string;
  focused: boolean;
  /** Lines the panel may take, its title included. */
  height: number;
}

const MAX_INDENT_DEPTH = 6;

/** The graph as an indented breadth-first list with transitions, scrolled to the selection. */
export const GraphPanel = memo(function GraphPanel(props: GraphPanelProps) {
  const { layout, selected, focused, height, graphName, lastEdit } = props;
  const anchor = selected ?? props.current;
  const focusRow = anchor !== undefined ? (layout.rowOf.get(anchor) ?? 0) : 0;
  const view = scrollWindow(layout.rows.length, focusRow, Math.max(height - 1, 1));
  const note = lastEdit ? `edits ${editSummary(lastEdit)}` : `${layout.order.length} nodes`;
  return (
    <Box flexDirection="column" height={height} overflow="hidden">
      <PanelTitle title={`Graph ${graphName}`} note={note} focused={focused} />
      {view.above > 0 ? <MoreLine count={view.above} up /> : null}
      {layout.rows.slice(view.start, view.end).map((row, i) => (
        <GraphRowLine
          key={row.kind === 'node' ? row.name : `section:${view.start + i}`}
          row={row}
          marks={row.kind === 'node' ? nodeMarks(row.name, props) : undefined}
          selected={row.kind === 'node' && row.name === anchor}
        />
      ))}
      {view.below > 0 ? <MoreLine count={view.below} up={false} /> : null}
    </Box>
  );
});

/** The panel's run facts from the run state: its name and what marks the nodes. */
export function runGraph(state: RunState): Pick<GraphPanelProps, 'graphName' | keyof MarkSource> {
  return {
    graphName: state.graphName,
    current: state.current,
    visited: state.visited,
    lastEdit: state.lastEdit,
  };
}

interface GraphRowLineProps {
  row: GraphRow;
  marks: NodeMarks | undefined;
  selected: boolean;
}

/** One row; memoised on its marks so a node entry re-renders two rows, not the whole list. */
const GraphRowLine = memo(
  function GraphRowLine({ row, marks, selected }: GraphRowLineProps) {
    const theme = useTheme();
    if (row.kind === 'section')
      return <Text {...theme.muted} wrap="truncate-end">{`   ── ${row.label} ──`}</Text>;
    const indent = '  '.repeat(Math.min(row.depth, MAX_INDENT_DEPTH));
    const nameStyle = selected
      ? { ...theme.selected, ...(marks?.role ? theme[marks.role] : {}) }
      : marks?.role
        ? theme[marks.role]
        : {};
    return (
      <Text wrap="truncate-end">
        <Text {...(selected ? theme.focus : {})}>{selected ? '›' : ' '}</Text>
        <Text {...(marks?.role === 'current' ? theme.current : marks?.run === '•' ? theme.visited : {})}>
          {marks?.run ?? ' '}
        </Text>
        <Text {...(marks?.edit === '+' ? theme.added : marks?.edit === '~' ? theme.changed : {})}>
          {marks?.edit ?? ' '}
        </Text>
        {` ${indent}`}
        <Text {...nameStyle}>{row.name}</Text>
        <Text {...theme.muted}>{` ${row.action}${row.interjection ? ' (interjection)' : ''}`}</Text>
        {row.edges.length > 0 ? <Text>{`  → ${edgesText(row.edges)}`}</Text> : null}
      </Text>
    );
  },
  (a, b) =>
    a.row === b.row &&
    a.selected === b.selected &&
    a.marks?.run === b.marks?.run &&
    a.marks?.edit === b.marks?.edit &&
    a.marks?.role === b.marks?.role,
);

/** `greet (yes) | bye (no)`; a transition to a node that does not exist is flagged with `?`. */
function edgesText(edges: readonly GraphEdge[]): string {
  return edges.map((e) => `${e.missing ? '?' : ''}${e.label}${e.choice ? ` (${e.choice})` : ''}`).join(' | ');
}
