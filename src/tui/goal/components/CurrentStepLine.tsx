import { Text } from 'ink';
import { memo } from 'react';
import { useTheme } from '../../theme.js';
import { authorizationText } from '../labels.js';
import type { CurrentStep } from '../view-state.js';

/** What the step under way is doing, in one line; nothing while it waits for an answer (the box says it). */
export const CurrentStepLine = memo(function CurrentStepLine({ step }: { step: CurrentStep }) {
  const theme = useTheme();
  const name = step.command?.name ?? 'the command';
  const text = ((): string | undefined => {
    switch (step.phase) {
      case 'thinking':
        return `… step ${step.step}: waiting for the model's answer`;
      case 'chosen':
        return `… step ${step.step}: ${name} chosen`;
      case 'asking':
        return undefined;
      case 'running':
        return `… step ${step.step}: running ${name}${step.by ? ` (${authorizationText(step.by)})` : ''}`;
    }
  })();
  return text === undefined ? null : (
    <Text {...theme.muted} wrap="truncate-end">
      {text}
    </Text>
  );
});
