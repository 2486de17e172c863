/**
 * `meta-agent chat GRAPH`: talk to an agent graph. In a terminal the chat view (Ink) shows the graph,
 * the current node and the agent's decisions; in a pipe, each input line is a user reply and each agent
 * reply one output line (or, with --json, the event stream). `--state FILE` saves the conversation after
 * every reply and resumes it in a later run.
 */
import type { Command } from 'commander';
import { attachTrace } from '../../engine/trace.js';
import { UserError } from '../../errors.js';
import { VersionedGraph } from '../../graph/versioned.js';
import { chatInLines, printEvents } from '../chat-lines.js';
import { ChatSession } from '../chat-session.js';
import { MODEL_OPTIONS_HELP, addModelOptions, type ModelOptionValues } from '../model-options.js';
import { addSelfReferentialOption, openAgent, type OpenedAgent } from '../open-agent.js';

const EXAMPLES = `
Examples:
  # chat in the terminal UI
  $ meta-agent chat tutor.autogram.json
  # resume where the last run stopped, and save after every reply
  $ meta-agent chat tutor.autogram.json --state tutor.state.json
  # one user reply per input line, one agent reply per output line
  $ printf 'hi\\nmy name is Ann\\n' | meta-agent chat tutor.autogram.json
  # the event stream as JSON lines; or every event kept in a file
  $ meta-agent chat tutor.autogram.json --json < replies.txt
  $ meta-agent chat tutor.autogram.json --trace run.jsonl
  # start elsewhere, under another name
  $ meta-agent chat fraction_agent.csv --start i2 --agent-name Tutor
  # let the agent rewrite its own graph; list its versions afterwards
  $ meta-agent chat editor.autogram.json --self-referential --state editor.state.json
  $ meta-agent history editor.state.json

Without a terminal (or with --no-tui), the agent speaks first when the graph starts with a chat node,
blank input lines are skipped, and the conversation ends at a quit transition or the end of the input.
--state FILE is read when it exists (it must belong to the same graph) and rewritten atomically after
every reply, so an interrupted run leaves the last good state. Exit code: 0 when the conversation ended
normally, 1 when a node failed (the state keeps the last good reply), 2 for a usage or file problem.
${MODEL_OPTIONS_HELP}`;

interface ChatOptions extends ModelOptionValues {
  state?: string;
  json?: boolean;
  trace?: string;
  tui: boolean;
  start?: string;
  agentName?: string;
  userName?: string;
  selfReferential?: boolean;
}

/** Registers `chat`. */
export function register(program: Command): void {
  const command = program
    .command('chat')
    .description('talk to an agent graph (terminal UI in a terminal, one line per reply in a pipe)')
    .argument('<graph>', 'graph file: NAME.autogram.json or an AutoGRAMS .csv spreadsheet')
    .option('--state <file>', 'resume the conversation saved in FILE, and save it there after every reply')
    .option('--json', 'write the event stream to stdout as JSON lines instead of the replies')
    .option('--trace <file>', 'append every event to FILE as JSON lines')
    .option('--no-tui', 'read replies line by line even in a terminal')
    .option('--start <node>', 'start at NODE instead of the graph’s start node (new conversations only)')
    .option('--agent-name <name>', 'the agent’s name in prompts (overrides config.agentName)')
    .option('--user-name <name>', 'the user’s name in prompts (overrides config.userName)');
  addModelOptions(addSelfReferentialOption(command))
    .addHelpText('after', EXAMPLES)
    .action(async (path: string, options: ChatOptions) => {
      const agent = await openAgent(path, options, {
        overrides: { startNode: options.start, agentName: options.agentName, userName: options.userName },
        selfReferential: options.selfReferential,
        statePath: options.state,
      });
      try {
        const session = openSession(agent, options);
        const stopTrace = options.trace === undefined ? undefined : traceTo(agent, options.trace);
        try {
          await converse(agent, session, options);
        } finally {
          stopTrace?.();
        }
      } finally {
        agent.interpreter.dispose();
      }
    });
}

/** The session, resumed from --state when that file exists. */
function openSession(agent: OpenedAgent, options: ChatOptions): ChatSession {
  const saved = agent.saved;
  if (saved?.ended)
    throw new UserError(
      `the conversation saved in ${options.state} has ended (a quit transition was taken)`,
      2,
      `delete ${options.state} to start over, or pass another --state file`,
    );
  if (saved && saved.current !== undefined && options.start !== undefined)
    process.stderr.write(`warning: --start is ignored: the conversation in ${options.state} is under way\n`);
  return new ChatSession(agent.interpreter, saved, options.state);
}

function traceTo(agent: OpenedAgent, file: string): () => void {
  try {
    return attachTrace(agent.bus, file);
  } catch (error) {
    throw new UserError(`--trace: cannot write ${file}: ${(error as Error).message}`, 2);
  }
}

/** Chooses the front end: the terminal UI only when both ends are a terminal and nothing asked for lines. */
async function converse(agent: OpenedAgent, session: ChatSession, options: ChatOptions): Promise<void> {
  if (options.tui && !options.json && process.stdin.isTTY && process.stdout.isTTY)
    return chatInTerminal(agent, session);
  const say = (reply: string) => process.stdout.write(`${reply}\n`);
  const stopEvents = options.json ? printEvents(agent.bus, (line) => process.stdout.write(line)) : undefined;
  try {
    await chatInLines(session, process.stdin, options.json ? () => undefined : say);
  } finally {
    stopEvents?.();
  }
}

/**
 * The terminal UI. Replies run one at a time (the view keeps its input off while the agent works); a
 * failing reply closes the view and its error ends the command. Quitting while the agent works exits at
 * once: the state file already holds the last finished reply. Quitting once the agent has answered
 * waits for that answer to be saved, since the view opens the reply line before the save is done.
 */
async function chatInTerminal(agent: OpenedAgent, session: ChatSession): Promise<void> {
  // Ink and React are loaded only when the view is shown.
  const { renderChatUI } = await import('../../tui/index.js');
  let answering = false;
  let saved = Promise.resolve();
  let failure: unknown;
  let finish = () => {};
  const finished = new Promise<void>((resolve) => (finish = resolve));
  // The agent has answered at its reply event, as the view sees it; the save comes after.
  const stopWatching = agent.bus.on((event) => {
    if (event.type === 'reply') answering = false;
  });
  const run = (text: string | undefined) => {
    answering = true;
    saved = session.reply(text).then(
      () => {
        answering = false;
      },
      (error: unknown) => {
        failure = error;
        finish();
      },
    );
  };
  const { chatbot } = agent.interpreter.models;
  const ui = renderChatUI({
    bus: agent.bus,
    graph: agent.graph,
    // The status bar names the model from the first call on; these fill it in until then.
    model: chatbot.modelName,
    scripted: chatbot.scripted,
    // A graph the agent can edit gets the History panel.
    ...(agent.graph instanceof VersionedGraph ? { history: agent.graph } : {}),
    onSubmit: run,
    onQuit: () => (answering ? process.exit(130) : void saved.then(finish)),
  });
  if (session.fresh) run(undefined);
  try {
    await finished;
  } finally {
    stopWatching();
    ui.unmount();
  }
  if (failure !== undefined) throw failure;
}
