/**
 * `meta-agent call GRAPH "f(arg, …)"`: runs one callable node of a graph as a function, with JSON
 * literals as arguments, and prints what it returns as JSON.
 */
import type { Command } from 'commander';
import type { CallOptions } from '../actions/call.js';
import {
  GOAL_LOOP_OPTIONS_HELP,
  MCP_OPTION_HELP,
  MODEL_OPTIONS_HELP,
  SANDBOX_LIMITS_HELP,
  addGoalLoopOptions,
  addModelOptions,
  addSelfReferentialOption,
} from '../options.js';
import { restartIfGraphRunsCode } from '../sandbox-process.js';

const EXAMPLES = `
Examples:
  $ meta-agent call fibonacci.autogram.json "fibonacci(10)"
  $ meta-agent call sort.autogram.json 'merge_sort([5, 3, 9, 1])'
  $ meta-agent call greet.autogram.json 'greet("Ann", {"formal": true})'
  $ meta-agent call tools.autogram.json today            a function without arguments

Each argument is a JSON literal: numbers, "strings" in double quotes, true/false/null, [lists] and
{"objects"}. The function runs as a local function (it sees only its arguments) and its return value
is printed on stdout as one line of JSON; what its code prints with console.log goes to stderr.
Chat nodes cannot run here: nobody is there to answer. A call that does not parse or names no function
of the graph exits 2, as bad input; one whose function fails exits 1.
${GOAL_LOOP_OPTIONS_HELP}
${MCP_OPTION_HELP}
${SANDBOX_LIMITS_HELP}
${MODEL_OPTIONS_HELP}`;

/** Registers `call`. */
export function register(program: Command): void {
  const command = program
    .command('call')
    .description('run a function node of a graph with JSON arguments and print its result as JSON')
    .argument('<graph>', 'graph file: NAME.autogram.json or an AutoGRAMS .csv spreadsheet')
    .argument('<call>', 'the call, e.g. "fibonacci(10)" or \'merge_sort([3, 1, 2])\'');
  addModelOptions(addGoalLoopOptions(addSelfReferentialOption(command)))
    .addHelpText('after', EXAMPLES)
    .action(async (path: string, text: string, options: CallOptions) => {
      await restartIfGraphRunsCode(path);
      const { runCall } = await import('../actions/call.js');
      await runCall(path, text, options);
    });
}
