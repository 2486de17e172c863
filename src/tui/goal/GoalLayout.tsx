import { Box, Static, Text } from 'ink';
import { useTerminalSize, type TerminalSize } from '../layout-size.js';
import { useTheme } from '../theme.js';
import { useElapsed } from '../use-elapsed.js';
import { ApprovalBox } from './components/ApprovalBox.js';
import { CurrentStepLine } from './components/CurrentStepLine.js';
import { FilesTouched } from './components/FilesTouched.js';
import { GoalItemView } from './components/GoalItemView.js';
import { GoalStatusBar } from './components/GoalStatusBar.js';
import { RunEnd } from './components/RunEnd.js';
import type { GoalStore } from './goal-store.js';
import { useApprovalKeys } from './use-approval-keys.js';
import { useGoalScreen } from './use-goal-screen.js';

export interface GoalLayoutProps {
  store: GoalStore;
  /** The chatbot model's name. */
  model: string;
  scripted: boolean;
  /** The run file, as the user would type it. */
  savedTo: string;
  /** Ctrl+C pressed in the view (raw mode turns it into a key). */
  onCtrlC: () => void;
  /** Fixes the terminal size instead of following the real one. */
  size?: TerminalSize;
  now?: () => number;
}

/**
 * A goal run: the header and finished steps printed once above (`<Static>`); below, redrawn, the step
 * under way or the question waiting for an answer, the files touched, a notice, the end, the status bar.
 */
export function GoalLayout({ store, model, scripted, savedTo, onCtrlC, size, now }: GoalLayoutProps) {
  const theme = useTheme();
  const { view, asking, notice, closed, startedAt, elapsedBefore } = useGoalScreen(store);
  const { columns } = useTerminalSize(size);
  const draft = useApprovalKeys({
    asking: asking !== undefined,
    active: !closed,
    onAnswer: store.answer,
    onCtrlC,
  });
  const running = elapsedBefore + useElapsed(startedAt, now);
  const spend = view.ended
    ? view.spend
    : { ...view.spend, elapsedMs: Math.max(running, view.spend.elapsedMs) };
  return (
    <Box flexDirection="column">
      <Static items={view.items}>
        {(item) => <GoalItemView key={item.id} item={item} width={columns} />}
      </Static>
      {view.current && !view.ended ? <CurrentStepLine step={view.current} /> : null}
      {asking ? <ApprovalBox request={asking} draft={draft} width={columns} /> : null}
      <FilesTouched files={view.files} />
      {notice && !view.ended ? <Text {...theme.warn}>{`! ${notice}`}</Text> : null}
      {view.ended ? <RunEnd end={view.ended} spend={view.spend} model={model} scripted={scripted} /> : null}
      {view.continuousLeft > 0 && !view.ended ? (
        <Text {...theme.warn}>
          {`⏵ ${view.continuousLeft} command${view.continuousLeft === 1 ? '' : 's'} left without asking (Ctrl+C asks before the next)`}
        </Text>
      ) : null}
      <GoalStatusBar spend={spend} model={model} scripted={scripted} savedTo={savedTo} />
    </Box>
  );
}
