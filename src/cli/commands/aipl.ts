/**
 * `meta-agent aipl check FILE…` and `meta-agent aipl render FILE`: AIPL templates (seed 002) on their
 * own, outside any autogram. `check` lints them and says what each does; `render` runs a template's
 * model-update phase against values or a saved conversation and prints the prompt it renders.
 */
import { InvalidArgumentError } from 'commander';
import type { Command } from 'commander';
import { STATE_NAME } from '../../aipl/names.js';
import type { AiplCheckOptions, AiplRenderOptions } from '../actions/aipl.js';
import { MODEL_OPTIONS_HELP, addModelOptions } from '../options.js';

const CHECK_EXAMPLES = `
Examples:
  $ meta-agent aipl check sales.aipl
  sales.aipl: ok, 2 updates, 2 blocks, 6 references
    reads: conversation.summary, userinfo.personality, userinfo.children
    writes: userinfo.school, userinfo.wifename
    soft functions: isAngryConversation, isCalmCharacter, isEvening
  $ meta-agent aipl check prompts/*.aipl           several files at once
  $ meta-agent aipl check - < sales.aipl           the template from stdin
  $ meta-agent aipl check sales.aipl --json        [{ file, ok, updates, blocks, … }]

A file that does not parse is shown as FILE:LINE:COLUMN: what was expected, followed by its line with
a caret under the column. References count every place a name is read: {ns.key} in text and strings,
names in conditions and arguments, {char} and the other special names. "reads" lists the state names
(ns.key) and the autogram's variables (vars.name) the template reads; "writes" the state names its
updates store into; "soft functions" the functions it calls, whose value a model decides.

Exit code: 0 when every file parses, 1 when one does not, 2 when a file cannot be read (missing, a
folder, not UTF-8 text).`;

const RENDER_EXAMPLES = `
Examples:
  # values from a file ({"prospect.name": "Dana"} or {"prospect": {"name": "Dana"}}) and the command line
  $ meta-agent aipl render sales.aipl --state values.json --set prospect.stage=demo
  # against a conversation saved by \`meta-agent chat --state\`: its AIPL state, and its messages
  # answering the template's update questions
  $ meta-agent aipl render sales.aipl --state sales.state.json --model gpt-4o-mini
  # offline, a rules file answering the model's questions; a fixed clock for {date} and {time}
  $ meta-agent aipl render sales.aipl --state sales.state.json --provider scripted --script rules.json \\
      --now 2025-03-14T15:30
  $ meta-agent aipl render sales.aipl --set vars.topic=pricing --json     { text, stored, calls, … }

The rendered prompt goes to stdout, as an autogram's prompt would read it (blank lines at either end
trimmed); one line on stderr says how many model calls were made, how many answers were cached, the time
taken and what the updates stored, with "(scripted)" when the answers come from a rules file. Nothing
is written to any file: a conversation state is read, never saved.

Values are strings, as AIPL stores them. Names are ns.key, case-insensitive; vars.name sets one of the
autogram's variables, which templates read as {vars.name}. --set overrides --state.
Without a conversation there is no user message to answer update questions from, so no update is due.
A template that asks a model nothing (no update due, no soft function, no value to read as a number or a
yes/no) renders with no model configured; one that does needs the model options below.
--char and --user default to the names a graph uses when its config names no one.

Exit code: 0 when rendered, 1 when a model call failed, 2 for a bad template, option or input file.
${MODEL_OPTIONS_HELP}`;

/** Registers `aipl` and its subcommands `check` and `render`. */
export function register(program: Command): void {
  const aipl = program
    .command('aipl')
    .description('check and render AIPL prompt templates (state updates, conditions, soft functions)');
  aipl
    .command('check')
    .description('parse template files, say what each does, and show where one does not parse')
    .argument('<file...>', 'template files (UTF-8 text), or - for stdin')
    .option('--json', 'print one JSON array of reports')
    .addHelpText('after', CHECK_EXAMPLES)
    .action(async (files: string[], options: AiplCheckOptions) => {
      const { runAiplCheck } = await import('../actions/aipl.js');
      await runAiplCheck(files, options);
    });
  const render = aipl
    .command('render')
    .description('run a template’s updates and conditions, and print the prompt it renders')
    .argument('<file>', 'a template file (UTF-8 text), or - for stdin')
    .option('--state <file>', 'a conversation saved by chat --state, or a JSON file of values')
    .option('--set <ns.key=value>', 'a value, overriding --state (repeatable)', setPair)
    .option('--char <name>', '{char} and {assistant}', 'Agent')
    .option('--user <name>', '{user}', 'User')
    .option(
      '--now <iso-date>',
      'the moment {date} and {time} show (default: now), e.g. 2025-03-14T15:30',
      isoDate,
    )
    .option('--json', 'print { text, stored, calls, cached, ms, scripted } instead');
  addModelOptions(render)
    .addHelpText('after', RENDER_EXAMPLES)
    .action(async (file: string, options: AiplRenderOptions) => {
      const { runAiplRender } = await import('../actions/aipl.js');
      await runAiplRender(file, options);
    });
}

/** `ns.key=value` appended to the values given so far. */
function setPair(pair: string, previous: [string, string][] | undefined): [string, string][] {
  const at = pair.indexOf('=');
  const name = at < 0 ? '' : pair.slice(0, at).trim();
  if (!STATE_NAME.test(name))
    throw new InvalidArgumentError('expected ns.key=value, e.g. --set prospect.name=Dana');
  return [...(previous ?? []), [name, pair.slice(at + 1)]];
}

/**
 * An ISO 8601 date, with a time or without: `2025-03-14`, `2025-03-14T15:30`, `2025-03-14T15:30:00Z`.
 * Without an offset it is the machine's local time (a date alone too, where JavaScript would read UTC),
 * so the same --now shows the same {date} and {time} wherever it runs.
 */
function isoDate(text: string): Date {
  const match = /^(\d{4})-(\d{2})-(\d{2})(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$/.exec(
    text.trim(),
  );
  const date = match && new Date(match[4] ? text.trim() : `${text.trim()}T00:00`);
  // JavaScript rolls 2025-02-30 over to March; a day the month lacks is a mistake, not a date.
  if (!match || !date || Number.isNaN(date.getTime()) || !isCalendarDay(match))
    throw new InvalidArgumentError('expected an ISO date, e.g. 2025-03-14 or 2025-03-14T15:30');
  return date;
}

function isCalendarDay([, year, month, day]: RegExpExecArray): boolean {
  const probe = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  return probe.getUTCMonth() === Number(month) - 1 && probe.getUTCDate() === Number(day);
}
