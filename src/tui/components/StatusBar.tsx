import { Text } from 'ink';
import { memo } from 'react';
import { formatCost, formatCount, formatElapsed } from '../format.js';
import type { RunState } from '../run-state.js';
import { useTheme } from '../theme.js';

export interface StatusBarProps {
  model?: string;
  /** The scripted provider answered: every view of model text must say so. */
  scripted: boolean;
  nodeCount: number;
  version: number;
  tokens: { prompt: number; completion: number };
  /** Dollars for the calls with a known price. */
  cost: number;
  modelCalls: number;
  /** Calls whose model has no known price: the estimate is a lower bound, or unknown if all are. */
  unpricedCalls: number;
  elapsedMs: number;
  errorCount: number;
}

/** One line: model, `[scripted]`, `nodes: N`, `vN`, tokens, estimated cost, elapsed time, errors. */
export const StatusBar = memo(function StatusBar(props: StatusBarProps) {
  const theme = useTheme();
  const { tokens } = props;
  const total = tokens.prompt + tokens.completion;
  return (
    <Text wrap="truncate-end">
      <Text {...theme.heading}>{props.model ?? 'model: —'}</Text>
      {props.scripted ? <Text {...theme.warn}> [scripted]</Text> : null}
      {` · nodes: ${props.nodeCount} · v${props.version}`}
      {` · tokens: ${formatCount(total)} (${formatCount(tokens.prompt)} in / ${formatCount(tokens.completion)} out)`}
      {` · ${costText(props.cost, props.modelCalls, props.unpricedCalls)}`}
      {` · ${formatElapsed(props.elapsedMs)}`}
      {props.errorCount > 0 ? (
        <Text {...theme.error}>{` · ${props.errorCount} error${props.errorCount === 1 ? '' : 's'}`}</Text>
      ) : null}
    </Text>
  );
});

/**
 * The status bar's figures from the run state. `before` names the model, and says the scripted
 * provider answers, until a model call does.
 */
export function runStatus(
  state: RunState,
  elapsedMs: number,
  before: { model?: string; scripted?: boolean } = {},
): StatusBarProps {
  return {
    model: state.model ?? before.model,
    scripted: state.scripted || before.scripted === true,
    nodeCount: state.nodeCount,
    version: state.version,
    tokens: state.tokens,
    cost: state.cost,
    modelCalls: state.modelCalls,
    unpricedCalls: state.unpricedCalls,
    elapsedMs,
    errorCount: state.errorCount,
  };
}

/** `est. $0.0012`; `est. ≥ $0.0012` when some models have no price; `est. cost n/a` when none has. */
function costText(cost: number, calls: number, unpriced: number): string {
  if (calls > 0 && unpriced === calls) return 'est. cost n/a';
  return `est. ${unpriced > 0 ? '≥ ' : ''}${formatCost(cost)}`;
}
