/** What `meta-agent call` does (declared in ../commands/call.ts). */
import { UserError } from '../../errors.js';
import { closestName } from '../../graph/names.js';
import { parseFunctionCall } from '../../graph/parse.js';
import type { GraphView } from '../../graph/view.js';
import { formatUsage } from '../../llm/usage.js';
import { printCodeLogs } from '../code-logs.js';
import { openAgent } from '../open-agent.js';
import type { GoalLoopOptionValues, ModelOptionValues } from '../options.js';
import { writeOut, writeErr } from '../terminal.js';

/** `call`'s options as commander parses them. */
export interface CallOptions extends ModelOptionValues, GoalLoopOptionValues {
  selfReferential?: boolean;
}

/** Runs the callable node `text` names in the graph at `path` and prints its result as JSON. */
export async function runCall(path: string, text: string, options: CallOptions): Promise<void> {
  const call = parseCall(text);
  const agent = await openAgent(path, options, {
    selfReferential: options.selfReferential,
    goalLoop: options,
  });
  try {
    checkCallable(agent.graph, call.fn, path);
    printCodeLogs(agent.bus, (line) => writeErr(line));
    const { value } = await agent.interpreter.applyFn(call.fn, call.args);
    // A bare `return` of nothing gives undefined, which JSON has no word for.
    writeOut(`${JSON.stringify(value ?? null)}\n`);
    const usage = agent.meter.total();
    if (usage.calls > 0) writeErr(`${formatUsage(usage)}\n`);
  } finally {
    await agent.dispose();
  }
}

/** `f(1, "a")` -> { fn: 'f', args: [1, 'a'] }; a bare name is a call without arguments. */
function parseCall(text: string): { fn: string; args: unknown[] } {
  const bare = /^\s*([A-Za-z_]\w*)\s*$/.exec(text);
  if (bare) return { fn: bare[1]!, args: [] };
  const call = parseFunctionCall(text);
  if (!call)
    throw new UserError(
      `cannot read the call "${text}"`,
      2,
      'write it as NAME(ARG, …) with JSON arguments, e.g. "fibonacci(10)" or \'merge_sort([3, 1, 2])\'',
    );
  const args = call.args.map((arg, i) => {
    try {
      return JSON.parse(arg) as unknown;
    } catch {
      throw new UserError(
        `argument ${i + 1} of ${call.fn}(…) is not a JSON literal: ${arg || '(empty)'}`,
        2,
        'write strings in double quotes ("text"), lists as [1, 2] and objects as {"key": 1}',
      );
    }
  });
  return { fn: call.fn, args };
}

/** Refuses a name no callable node has, suggesting the closest and listing them all. */
function checkCallable(graph: GraphView, fn: string, path: string): void {
  const callables = graph.nodes().flatMap((node) => (node.callable ? [node] : []));
  if (callables.some((node) => node.callable!.fn === fn)) return;
  if (callables.length === 0)
    throw new UserError(
      `${path} has no function ${fn}: it has no callable nodes`,
      2,
      'a callable node is named like f(a, b)',
    );
  const guess = closestName(
    fn,
    callables.map((node) => node.callable!.fn),
  );
  throw new UserError(
    `${path} has no function ${fn}${guess ? `; did you mean ${guess}?` : ''}`,
    2,
    `callable nodes: ${callables.map((node) => node.name).join(', ')}`,
  );
}
