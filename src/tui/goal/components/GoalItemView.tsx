import { Box, Text } from 'ink';
import { memo } from 'react';
import type { Authorization, Thoughts } from '../../../events.js';
import { useTheme } from '../../theme.js';
import { authorizationText } from '../labels.js';
import { commandLine, foldLines } from '../shown-text.js';
import type { GoalItem, StepOutcome } from '../view-state.js';

/** Lines of a command's result shown before the rest is counted. */
export const RESULT_LINES = 3;

export interface GoalItemViewProps {
  item: GoalItem;
  width: number;
}

/** One finished item of a goal run; memoised because it never changes once printed. */
export const GoalItemView = memo(function GoalItemView({ item, width }: GoalItemViewProps) {
  const theme = useTheme();
  switch (item.kind) {
    case 'header':
      return (
        <Box flexDirection="column">
          <Text>
            <Text {...theme.agent}>{item.name}</Text>
            {item.role ? ` · ${item.role}` : ''}
          </Text>
          <Text {...theme.heading}>Goals</Text>
          {item.goals.map((goal, i) => (
            <Text key={i}>{`  ${i + 1}. ${goal}`}</Text>
          ))}
          <Text {...theme.muted}>{`Workspace: ${item.workspace}`}</Text>
        </Box>
      );
    case 'resumed':
      return (
        <Text
          {...theme.muted}
        >{`↺ resumed run: ${item.steps} step${item.steps === 1 ? '' : 's'} taken before, shown below`}</Text>
      );
    case 'step':
      return (
        <Box flexDirection="column" marginTop={1}>
          <Text
            {...theme.heading}
            wrap="truncate-end"
          >{`── step ${item.step} ${'─'.repeat(Math.max(width - 12, 3))}`}</Text>
          {item.thoughts ? <ThoughtLines thoughts={item.thoughts} /> : null}
          {item.command ? (
            <Text wrap="truncate-end">
              <Text {...theme.focus}>{'  ▶ '}</Text>
              {commandLine(item.command.name, item.command.args)}
            </Text>
          ) : null}
        </Box>
      );
    case 'outcome':
      return <OutcomeLines outcome={item.outcome} name={item.name} by={item.by} />;
    case 'warning':
      return (
        <Text
          {...theme.warn}
        >{`⚠ ${item.warning ? `${item.warning} warning` : 'note'} (step ${item.step}): ${item.message}`}</Text>
      );
  }
});

/** The model's thoughts: `speak` as the headline, then the rest, the plan as its own lines. */
function ThoughtLines({ thoughts }: { thoughts: Thoughts }) {
  const theme = useTheme();
  const plan = thoughts.plan
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const field = (label: string, text: string) =>
    text.trim() ? (
      <Text>
        <Text {...theme.muted}>{`  ${label}: `}</Text>
        {text.trim()}
      </Text>
    ) : null;
  return (
    <Box flexDirection="column">
      {thoughts.speak.trim() ? <Text {...theme.agent}>{`  “${thoughts.speak.trim()}”`}</Text> : null}
      {field('thought', thoughts.text)}
      {field('reasoning', thoughts.reasoning)}
      {plan.length > 0 ? <Text {...theme.muted}>{'  plan:'}</Text> : null}
      {plan.map((line, i) => (
        <Text key={i}>{`    ${/^[-*•]/.test(line) ? line : `- ${line}`}`}</Text>
      ))}
      {field('criticism', thoughts.criticism)}
    </Box>
  );
}

interface OutcomeLinesProps {
  outcome: StepOutcome;
  name?: string;
  by?: Authorization;
}

/** How a step came out: the result folded to its first lines, or why nothing ran. */
function OutcomeLines({ outcome, name, by }: OutcomeLinesProps) {
  const theme = useTheme();
  const command = name ?? 'the command';
  switch (outcome.kind) {
    case 'result': {
      const folded = foldLines(outcome.output, RESULT_LINES);
      const how = by ? ` (${authorizationText(by)})` : '';
      return (
        <Box flexDirection="column">
          <Text {...(outcome.ok ? theme.ok : theme.error)} wrap="truncate-end">
            {outcome.ok ? `  ✓ ${command} ran${how}` : `  ✗ ${command} failed${how}`}
          </Text>
          {folded.lines.map((line, i) => (
            <Text key={i} wrap="truncate-end">{`    ${line}`}</Text>
          ))}
          {folded.more > 0 ? (
            <Text {...theme.muted}>{`    … ${folded.more} more line${folded.more === 1 ? '' : 's'}`}</Text>
          ) : null}
        </Box>
      );
    }
    case 'refused':
      return (
        <Text {...theme.warn}>
          {`  ✗ ${command} not run`}
          {outcome.feedback !== undefined ? `: your feedback to the model: ${outcome.feedback}` : ''}
          {outcome.feedback === undefined && outcome.message ? `: ${outcome.message}` : ''}
        </Text>
      );
    case 'stopped':
      return <Text {...theme.warn}>{`  ■ ${command} not run: the run stops`}</Text>;
    case 'unusable':
      return (
        <Text {...theme.error}>
          {`  ✗ unusable answer${outcome.streak !== undefined ? ` (${outcome.streak} in a row)` : ''}: ${outcome.problem}`}
        </Text>
      );
    case 'interrupted':
      return (
        <Text {...theme.warn} wrap="truncate-end">
          {`  ↯ ${command} was running when the run stopped; it is not run again`}
        </Text>
      );
  }
}
