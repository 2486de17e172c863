/** What `meta-agent chat` does (declared in ../commands/chat.ts). */
import { UserError } from '../../errors.js';
import { VersionedGraph } from '../../graph/versioned.js';
import { chatInLines, printEvents } from '../chat-lines.js';
import { Conversation } from '../../engine/conversation.js';
import { printCodeLogs } from '../code-logs.js';
import { openAgent, type OpenedAgent } from '../open-agent.js';
import { openStore } from '../store-for.js';
import type { GoalLoopOptionValues, ModelOptionValues } from '../options.js';
import { writeOut, writeErr } from '../terminal.js';
import { traceTo } from '../trace-option.js';

/** `chat`'s options as commander parses them. */
export interface ChatOptions extends ModelOptionValues, GoalLoopOptionValues {
  state?: string;
  json?: boolean;
  trace?: string;
  tui: boolean;
  start?: string;
  agentName?: string;
  userName?: string;
  selfReferential?: boolean;
  database?: string;
  /** `--aipl-set ns.key=value`: AIPL values stored before the conversation goes on. */
  aiplSet?: [string, string][];
}

/** Opens the graph at `path` and holds the conversation, in the terminal UI or line by line. */
export async function runChat(path: string, options: ChatOptions): Promise<void> {
  const opened = await openStore(options.database);
  try {
    const agent = await openAgent(path, options, {
      overrides: { startNode: options.start, agentName: options.agentName, userName: options.userName },
      selfReferential: options.selfReferential,
      statePath: options.state,
      store: opened.store,
      goalLoop: options,
      terminalUi: usesTerminalUi(options),
    });
    try {
      const session = openSession(agent, options, opened.inDatabase);
      const stopTrace = options.trace === undefined ? undefined : traceTo(agent.bus, options.trace);
      try {
        await converse(agent, session, options);
      } finally {
        stopTrace?.();
      }
    } finally {
      await agent.dispose();
    }
  } finally {
    await opened.close();
  }
}

/** The session, resumed from --state when the store holds it. */
function openSession(agent: OpenedAgent, options: ChatOptions, inDatabase: boolean): Conversation {
  const saved = agent.saved;
  if (saved?.ended)
    throw new UserError(
      `the conversation saved in ${inDatabase ? `the database as "${options.state}"` : options.state} has ended (a quit transition was taken)`,
      2,
      inDatabase
        ? 'pass another --state name to start a new conversation'
        : `delete ${options.state} to start over, or pass another --state file`,
    );
  if (saved && saved.current !== undefined && options.start !== undefined)
    writeErr(`warning: --start is ignored: the conversation in ${options.state} is under way\n`);
  const keptAt =
    options.state === undefined ? undefined : { store: agent.store.conversations, key: options.state };
  return new Conversation(agent.interpreter, saved, keptAt);
}

/** The terminal UI is the front end only when both ends are a terminal and nothing asked for lines. */
function usesTerminalUi(options: ChatOptions): boolean {
  return Boolean(options.tui && !options.json && process.stdin.isTTY && process.stdout.isTTY);
}

async function converse(agent: OpenedAgent, session: Conversation, options: ChatOptions): Promise<void> {
  const setAipl = async () => {
    if (options.aiplSet) await session.setAipl(options.aiplSet);
  };
  if (usesTerminalUi(options)) {
    await setAipl();
    return chatInTerminal(agent, session);
  }
  const say = (reply: string) => writeOut(`${reply}\n`);
  // With --json the code nodes' output is in the event stream already.
  const stopEvents = options.json
    ? printEvents(agent.bus, (line) => writeOut(line))
    : printCodeLogs(agent.bus, (line) => writeErr(line));
  try {
    // Set once the events are listened to: --json tells the updates as any other.
    await setAipl();
    await chatInLines(session, process.stdin, options.json ? () => undefined : say);
  } finally {
    stopEvents();
  }
}

/**
 * The terminal UI. Replies run one at a time (the view keeps its input off while the agent works); a
 * failing reply closes the view and its error ends the command. Quitting while the agent works exits at
 * once, interrupted: the state file already holds the last finished reply. Quitting once the agent has
 * answered waits for that answer to be saved, since the view opens the reply line before the save is
 * done; `q` then ends the chat as done, Ctrl+C as interrupted (exit 130), as in a pipe.
 */
async function chatInTerminal(agent: OpenedAgent, session: Conversation): Promise<void> {
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
    scripted: chatbot.answersFrom === 'rules',
    // A graph the agent can edit gets the History panel.
    ...(agent.graph instanceof VersionedGraph ? { history: agent.graph } : {}),
    // A resumed conversation shows its earlier turns and where it stands before the user types.
    ...(agent.saved ? { resumed: agent.saved } : {}),
    onSubmit: run,
    onQuit: (interrupted) => {
      if (answering) process.exit(130);
      if (interrupted) process.exitCode = 130;
      void saved.then(finish);
    },
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
