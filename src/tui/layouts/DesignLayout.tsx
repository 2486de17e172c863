import { Box } from 'ink';
import { useMemo } from 'react';
import type { EventBus } from '../../events.js';
import type { GraphView } from '../../graph/view.js';
import { DesignProgress } from '../components/DesignProgress.js';
import { GraphPanel, runGraph } from '../components/GraphPanel.js';
import { HelpOverlay } from '../components/HelpOverlay.js';
import { NodeInspector } from '../components/NodeInspector.js';
import { runStatus, StatusBar } from '../components/StatusBar.js';
import { Transcript } from '../components/Transcript.js';
import { versionRange } from '../format.js';
import { layoutGraph } from '../graph-layout.js';
import { designHeight, splitColumns, useTerminalSize, type TerminalSize } from '../layout-size.js';
import { nodeMarks } from '../marks.js';
import { selectedNode, type Panel } from '../ui-state.js';
import { useElapsed } from '../use-elapsed.js';
import { useKeyboard } from '../use-keyboard.js';
import { useRunState } from '../use-run-state.js';

/** What the design view needs: the event stream, and optionally the designer graph being run. */
export interface DesignLayoutProps {
  bus: EventBus;
  /** The designer (a meta-autogram): shown beside the stages with its current node marked. */
  graph?: GraphView;
  /** Called on `q` or Ctrl+C once the view has unmounted. */
  onQuit: () => void;
  /** The chatbot model, shown until the first model call names it. */
  model?: string;
  /** The scripted provider answers: the status bar says so before any model call does. */
  scripted?: boolean;
  size?: TerminalSize;
  now?: () => number;
}

const NO_PANELS: Panel[] = [];
const GRAPH_PANELS: Panel[] = ['graph', 'inspector'];

/** Errors above; stages with the streamed text, beside the designer graph when there is one; status. */
export function DesignLayout(props: DesignLayoutProps) {
  const { bus, graph, onQuit } = props;
  const { state } = useRunState(bus, graph, props);
  const layout = useMemo(() => (graph ? layoutGraph(graph) : undefined), [graph, state.version]);
  const ui = useKeyboard({
    context: {
      panels: graph ? GRAPH_PANELS : NO_PANELS,
      order: layout?.order ?? [],
      current: state.current,
      historyLength: 0,
      inputEnabled: false,
    },
    onQuit,
  });

  const size = useTerminalSize(props.size);
  const height = designHeight(size.rows);
  const columns = graph ? splitColumns(size.columns) : { left: size.columns, right: 0 };
  const elapsedMs = useElapsed(state.startedAt, props.now);
  const selected = layout ? selectedNode(ui, { order: layout.order, current: state.current }) : undefined;
  const speakers = { agent: graph?.config.agentName ?? 'Designer', user: graph?.config.userName ?? 'User' };

  return (
    <Box flexDirection="column">
      <Transcript
        entries={state.transcript}
        speakers={speakers}
        showDecisions={ui.showDecisions}
        width={size.columns}
        // The design view fills the terminal: nothing of the transcript stays in view above it.
        room={0}
      />
      {ui.help ? (
        <HelpOverlay mode="design" height={height} />
      ) : (
        <Box flexDirection="row" height={height}>
          <Box width={columns.left} marginRight={graph ? 1 : 0}>
            <DesignProgress stages={state.stages} height={height} width={columns.left} />
          </Box>
          {graph && layout ? (
            <Box width={columns.right}>
              {ui.focus === 'inspector' ? (
                <NodeInspector
                  node={selected !== undefined ? graph.get(selected) : undefined}
                  marks={selected !== undefined ? nodeMarks(selected, state) : undefined}
                  editVersions={state.lastEdit ? versionRange(state.lastEdit) : undefined}
                  scroll={ui.inspectorScroll}
                  focused
                  height={height}
                  width={columns.right}
                />
              ) : (
                <GraphPanel
                  {...runGraph(state)}
                  layout={layout}
                  selected={selected}
                  focused={ui.focus === 'graph'}
                  height={height}
                />
              )}
            </Box>
          ) : null}
        </Box>
      )}
      <StatusBar {...runStatus(state, elapsedMs, props)} />
    </Box>
  );
}
