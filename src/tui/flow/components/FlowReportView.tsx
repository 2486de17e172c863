import { Box } from 'ink';
import { memo } from 'react';
import type { FlowReport } from '../view-state.js';
import { FlowChanges } from './FlowChanges.js';
import { FlowHeader } from './FlowHeader.js';
import { FlowNodeList } from './FlowNodeList.js';
import { FlowSummary } from './FlowSummary.js';

export interface FlowReportViewProps {
  report: FlowReport;
  width: number;
  attempts?: number;
}

/** A finished pass, printed once and never redrawn: its header, every node, every change, the end. */
export const FlowReportView = memo(function FlowReportView({ report, width, attempts }: FlowReportViewProps) {
  return (
    <Box flexDirection="column" width={width}>
      <FlowHeader
        flow={report.flow}
        pass={report.pass}
        {...(report.concurrency !== undefined && { concurrency: report.concurrency })}
        resumed={report.resumed}
      />
      <FlowNodeList
        nodes={report.nodes}
        width={width}
        height={Number.MAX_SAFE_INTEGER}
        {...(attempts !== undefined && { attempts })}
        still
      />
      <FlowChanges changes={report.changes} />
      <FlowSummary end={report.end} />
    </Box>
  );
});
