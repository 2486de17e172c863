import { Box } from 'ink';
import { useCallback, useMemo } from 'react';
import type { ConversationState } from '../../engine/state.js';
import type { EventBus } from '../../events.js';
import type { GraphView } from '../../graph/view.js';
import { GraphPanel, runGraph } from '../components/GraphPanel.js';
import { HelpOverlay } from '../components/HelpOverlay.js';
import { HistoryView } from '../components/HistoryView.js';
import { InputLine } from '../components/InputLine.js';
import { LiveTurn } from '../components/LiveTurn.js';
import { NodeInspector } from '../components/NodeInspector.js';
import { runStatus, StatusBar } from '../components/StatusBar.js';
import { Transcript } from '../components/Transcript.js';
import { versionRange } from '../format.js';
import { layoutGraph } from '../graph-layout.js';
import { chatHeights, splitColumns, useTerminalSize, type TerminalSize } from '../layout-size.js';
import { nodeMarks } from '../marks.js';
import type { RunState } from '../run-state.js';
import { selectedNode, type Panel } from '../ui-state.js';
import { useElapsed } from '../use-elapsed.js';
import { useKeyboard } from '../use-keyboard.js';
import { useRunState } from '../use-run-state.js';
import type { EditHistory } from '../version-diff.js';

/** What the chat view needs: the event stream, the graph it runs, and where the user's replies go. */
export interface ChatLayoutProps {
  bus: EventBus;
  graph: GraphView;
  /** Receives each reply the user submits; the input stays disabled until the agent answers. */
  onSubmit: (text: string) => void;
  /**
   * Called on `q` or Ctrl+C (`interrupted`) once the view has unmounted; the caller saves the
   * conversation.
   */
  onQuit: (interrupted: boolean) => void;
  /** A conversation saved by an earlier session: its transcript and current node show from the start. */
  resumed?: ConversationState;
  /** The graph's edit history (a `VersionedGraph`); adds the History panel. */
  history?: EditHistory;
  /** The chatbot model, shown until the first model call names it. */
  model?: string;
  /** The scripted provider answers: the status bar says so before any model call does. */
  scripted?: boolean;
  /** Fixes the terminal size instead of following the real one. */
  size?: TerminalSize;
  now?: () => number;
}

/** Transcript above; graph and inspector (or history) side by side; the live turn; status; reply line. */
export function ChatLayout(props: ChatLayoutProps) {
  const { bus, graph, history, onSubmit, onQuit } = props;
  const { state, submitted } = useRunState(bus, graph, props);
  // The graph object is edited in place; its version (from the events) says when to lay it out again.
  const layout = useMemo(() => layoutGraph(graph), [graph, state.version]);
  const records = useMemo(() => (history ? [...history.history()].reverse() : []), [history, state.version]);
  const inputEnabled = !state.working && !state.submitted && !state.ended && !state.failure;
  const panels: Panel[] = history
    ? ['input', 'graph', 'inspector', 'history']
    : ['input', 'graph', 'inspector'];

  const submit = useCallback(
    (text: string) => {
      submitted();
      onSubmit(text);
    },
    [submitted, onSubmit],
  );
  const ui = useKeyboard({
    context: {
      panels,
      order: layout.order,
      current: state.current,
      historyLength: records.length,
      inputEnabled,
    },
    onSubmit: submit,
    onQuit,
  });

  const size = useTerminalSize(props.size);
  const heights = chatHeights(size.rows);
  const columns = splitColumns(size.columns);
  const elapsedMs = useElapsed(state.startedAt, props.now);
  const speakers = { agent: graph.config.agentName, user: graph.config.userName };
  const selected = selectedNode(ui, { order: layout.order, current: state.current });
  const selectedSpec = selected !== undefined ? graph.get(selected) : undefined;

  return (
    <Box flexDirection="column">
      <Transcript
        entries={state.transcript}
        speakers={speakers}
        showDecisions={ui.showDecisions}
        width={size.columns}
        room={heights.above}
      />
      {ui.help ? (
        <HelpOverlay mode="chat" height={heights.panels + heights.live} />
      ) : (
        <>
          <Box flexDirection="row" height={heights.panels}>
            <Box width={columns.left} marginRight={1}>
              <GraphPanel
                {...runGraph(state)}
                layout={layout}
                selected={selected}
                focused={ui.focus === 'graph'}
                height={heights.panels}
              />
            </Box>
            <Box width={columns.right}>
              {ui.side === 'history' && history ? (
                <HistoryView
                  records={records}
                  index={ui.historyIndex}
                  focused={ui.focus === 'history'}
                  height={heights.panels}
                />
              ) : (
                <NodeInspector
                  node={selectedSpec}
                  marks={selected !== undefined ? nodeMarks(selected, state) : undefined}
                  editVersions={state.lastEdit ? versionRange(state.lastEdit) : undefined}
                  aipl={state.aipl}
                  scroll={ui.inspectorScroll}
                  focused={ui.focus === 'inspector'}
                  height={heights.panels}
                  width={columns.right}
                />
              )}
            </Box>
          </Box>
          <LiveTurn
            turn={state.turn}
            working={state.working}
            ended={state.ended}
            failure={state.failure}
            typing={inputEnabled && ui.focus === 'input'}
            current={state.current}
            agent={speakers.agent}
            showDecisions={ui.showDecisions}
            height={heights.live}
            width={size.columns}
          />
        </>
      )}
      <StatusBar {...runStatus(state, elapsedMs, props)} />
      <InputLine
        value={ui.draft}
        enabled={inputEnabled}
        focused={ui.focus === 'input'}
        reason={closedBecause(state, speakers.agent)}
      />
    </Box>
  );
}

/** Why the reply line takes no text. */
function closedBecause(state: RunState, agent: string): string {
  if (state.failure) return 'the run stopped at an error';
  return state.ended ? 'the conversation has ended' : `${agent} is working…`;
}
