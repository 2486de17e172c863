import { Text } from 'ink';
import { memo } from 'react';
import { useTheme } from '../../theme.js';

export interface FlowHeaderProps {
  flow: string;
  pass?: number;
  concurrency?: number;
  resumed: boolean;
}

/** `flow NAME · pass 2 · concurrency 4 · resumed`; before the pass starts, `· starting`. */
export const FlowHeader = memo(function FlowHeader({ flow, pass, concurrency, resumed }: FlowHeaderProps) {
  const theme = useTheme();
  const parts = [
    pass !== undefined ? `pass ${pass}` : 'starting',
    ...(concurrency !== undefined ? [`concurrency ${concurrency}`] : []),
  ];
  return (
    <Text wrap="truncate-end">
      <Text {...theme.heading}>{`flow ${flow}`}</Text>
      {` · ${parts.join(' · ')}`}
      {resumed ? <Text {...theme.warn}> · resumed</Text> : null}
    </Text>
  );
});
