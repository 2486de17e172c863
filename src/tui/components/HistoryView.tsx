import { Box, Text } from 'ink';
import { memo } from 'react';
import { scrollWindow } from '../scroll.js';
import { useTheme, type Role } from '../theme.js';
import { diffRecord, type VersionDiff, type VersionRecord } from '../version-diff.js';
import { MoreLine, PanelTitle } from './PanelTitle.js';

export interface HistoryViewProps {
  /** Applied edits, newest first. */
  records: readonly VersionRecord[];
  /** Selected record, counted from the newest. */
  index: number;
  focused: boolean;
  height: number;
}

/** The list of versions, and below it the diff of the selected one. */
export const HistoryView = memo(function HistoryView({ records, index, focused, height }: HistoryViewProps) {
  const theme = useTheme();
  const title = `History  ${records.length} edit${records.length === 1 ? '' : 's'}`;
  if (records.length === 0)
    return (
      <Box flexDirection="column" height={height}>
        <PanelTitle title={title} focused={focused} />
        <Text {...theme.muted}>{'  no edits yet: the graph is as loaded'}</Text>
      </Box>
    );
  const at = Math.min(Math.max(index, 0), records.length - 1);
  const selected = records[at]!;
  // The list gets about half the panel, the diff the rest.
  const listHeight = Math.max(Math.min(records.length, Math.floor((height - 2) / 2)), 1);
  const list = scrollWindow(records.length, at, listHeight);
  const diff = diffLines(selected, diffRecord(selected));
  const diffView = scrollWindow(
    diff.length,
    0,
    Math.max(height - 2 - Math.min(listHeight, records.length), 1),
  );
  return (
    <Box flexDirection="column" height={height} overflow="hidden">
      <PanelTitle title={title} note="↑↓ select a version" focused={focused} />
      {list.above > 0 ? <MoreLine count={list.above} up /> : null}
      {records.slice(list.start, list.end).map((record, i) => (
        <Text key={record.version} wrap="truncate-end" {...(list.start + i === at ? theme.selected : {})}>
          {`${list.start + i === at ? '›' : ' '} v${record.version}  ${record.op} ${record.name}  by ${record.by}  ${clock(record.at)}`}
        </Text>
      ))}
      {list.below > 0 ? <MoreLine count={list.below} up={false} /> : null}
      <Text {...theme.muted} wrap="truncate-end">
        {'  ── diff ──'}
      </Text>
      {diff.slice(diffView.start, diffView.end).map((line, i) => (
        <Text key={i} wrap="truncate-end" {...(line.role ? theme[line.role] : {})}>
          {line.text}
        </Text>
      ))}
      {diffView.below > 0 ? <MoreLine count={diffView.below} up={false} /> : null}
    </Box>
  );
});

interface DiffLine {
  text: string;
  role?: Role;
}

/** `+ added x`, `- removed x`, or `~ changed x` followed by each changed field, before then after. */
function diffLines(record: VersionRecord, diff: VersionDiff): DiffLine[] {
  const head = `v${record.version}${record.reverts !== undefined ? ` (reverts v${record.reverts})` : ''}: `;
  switch (diff.kind) {
    case 'added':
      return [{ text: `+ ${head}added ${diff.name}`, role: 'added' }];
    case 'removed':
      return [{ text: `- ${head}removed ${diff.name}`, role: 'removed' }];
    case 'changed':
      return [
        { text: `~ ${head}changed ${diff.name}`, role: 'changed' },
        ...(diff.fields.length === 0 ? [{ text: '    no field differs' }] : []),
        ...diff.fields.flatMap((f) => [
          { text: `    ${f.field}:` },
          { text: `      - ${f.before}`, role: 'removed' as const },
          { text: `      + ${f.after}`, role: 'added' as const },
        ]),
      ];
  }
}

/** The time of day of an ISO timestamp, or the text as given when it is not one. */
function clock(at: string): string {
  const date = new Date(at);
  return Number.isNaN(date.getTime()) ? at : date.toTimeString().slice(0, 8);
}
