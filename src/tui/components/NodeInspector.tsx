import { Box, Text } from 'ink';
import { memo } from 'react';
import type { NodeSpec } from '../../graph/schema.js';
import { aiplLines, type AiplView } from '../aipl-view.js';
import type { NodeMarks } from '../marks.js';
import { nodeFieldLines } from '../node-fields.js';
import { offsetWindow } from '../scroll.js';
import { useTheme } from '../theme.js';
import { MoreLine, PanelTitle } from './PanelTitle.js';

export interface NodeInspectorProps {
  node?: NodeSpec;
  marks?: NodeMarks;
  /** The versions of the marked edits (`v4`, `v3–v5`), named when the node was added or changed. */
  editVersions: string | undefined;
  /** The conversation's AIPL state, listed after the node's fields; absent when it has none. */
  aipl?: AiplView;
  /** First field line shown (PgUp/PgDn move it). */
  scroll: number;
  focused: boolean;
  height: number;
  width: number;
}

/**
 * Every field of the selected node, empty ones included, then the conversation's AIPL state, scrolled
 * with PgUp/PgDn. The AIPL state belongs to no node, but it is what shapes the next prompt, so it sits
 * with the fields that do.
 */
export const NodeInspector = memo(function NodeInspector(props: NodeInspectorProps) {
  const { node, marks, aipl, scroll, focused, height, width } = props;
  const theme = useTheme();
  if (!node)
    return (
      <Box flexDirection="column" height={height}>
        <PanelTitle title="Node" note="no node selected" focused={focused} />
      </Box>
    );
  const lines = [...nodeFieldLines(node, width - 2), ...(aipl ? aiplLines(aipl, width - 2) : [])];
  const view = offsetWindow(lines.length, scroll, Math.max(height - 1, 1));
  return (
    <Box flexDirection="column" height={height} overflow="hidden">
      <PanelTitle
        title={`Node ${node.name}`}
        note={statusNote(marks, props.editVersions)}
        focused={focused}
      />
      {view.above > 0 ? <MoreLine count={view.above} up /> : null}
      {lines.slice(view.start, view.end).map((line, i) => (
        <Text key={view.start + i} wrap="truncate-end">
          {line.label !== undefined ? <Text {...theme.heading}>{`${line.label}: `}</Text> : '  '}
          <Text {...(line.empty ? theme.muted : {})}>{line.text}</Text>
        </Text>
      ))}
      {view.below > 0 ? <MoreLine count={view.below} up={false} /> : null}
    </Box>
  );
});

/** `▶ current · + added in v4`, in words as well as markers. */
function statusNote(marks: NodeMarks | undefined, editVersions: string | undefined): string {
  if (!marks) return '';
  const parts: string[] = [];
  if (marks.run === '▶') parts.push('▶ current');
  else if (marks.run === '•') parts.push('• visited');
  if (marks.edit === '+') parts.push(`+ added in ${editVersions}`);
  else if (marks.edit === '~') parts.push(`~ changed in ${editVersions}`);
  return parts.join(' · ');
}
