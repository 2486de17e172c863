import { Text } from 'ink';
import { memo } from 'react';
import { priceOf } from '../../llm/usage.js';
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
  /** The model named before any call has a known price: until a call says, the cost is $0, not n/a. */
  priced: boolean;
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
      {` · ${costText(props)}`}
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
    priced: before.model !== undefined && priceOf(before.model) !== undefined,
    elapsedMs,
    errorCount: state.errorCount,
  };
}

/**
 * `est. $0.0012`; `est. ≥ $0.0012` when some models have no price; `est. cost n/a` when none has, and
 * before any call when the model named has none: the same model reads the same before its first call
 * as after it.
 */
function costText({ cost, modelCalls, unpricedCalls, priced }: StatusBarProps): string {
  if (modelCalls === 0 ? !priced : unpricedCalls === modelCalls) return 'est. cost n/a';
  return `est. ${unpricedCalls > 0 ? '≥ ' : ''}${formatCost(cost)}`;
}
