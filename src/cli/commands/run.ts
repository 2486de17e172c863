/**
 * `meta-agent run`: an autonomous, goal-driven run (seed 004): the model picks one command a step until
 * the goals are met or a stated reason ends the run. In a terminal the run view (Ink) shows each step
 * and asks before commands run; in a pipe, one line per step (or, with --json, the event stream).
 */
import { InvalidArgumentError, Option } from 'commander';
import type { Command } from 'commander';
import type { RunOptions } from '../run-setup.js';
import {
  DATABASE_OPTION_HELP,
  MCP_OPTION_HELP,
  MODEL_OPTIONS_HELP,
  addDatabaseOption,
  addMcpOption,
  addModelOptions,
  list,
  positiveInteger,
} from '../options.js';
import { restartForSandbox } from '../sandbox-process.js';

const EXAMPLES = `
Examples:
  # in a terminal: asks for a name, a role and up to five goals, then shows the run
  # (at the next start in the same workspace it offers these settings again: y goes on with them)
  $ meta-agent run
  # the name, role and goals of an AutoGPT ai_settings.yaml
  $ meta-agent run --ai-settings ai_settings.yaml --continuous 10
  # one goal, approve every command yourself (y, n, y -5, a, or type feedback)
  $ meta-agent run --goal "write a haiku about autumn to haiku.txt"
  # unattended: 20 commands without asking, at most 30 steps and $0.50
  $ meta-agent run --goal "summarize notes.md into summary.md" --continuous 20 --max-steps 30 --max-cost 0.5
  # a pipe or CI: let named commands run, print one line per step
  $ meta-agent run --goal "sort data.csv by name" --allow read_file,write_to_file < /dev/null
  # web search through your SearXNG (google), images and transcription through the model server
  $ META_AGENT_SEARCH_URL=http://localhost:8888 meta-agent run --goal "find three tennis strings for topspin" --allow google
  $ meta-agent run --goal "draw a logo into images/" --allow generate_image,read_audio_from_file
  # say each step's speak thought aloud
  $ meta-agent run --goal "plan my week in week.md" --speak
  # offline, with scripted answers (no model server)
  $ meta-agent run --goal "write hello.txt" --yes --provider scripted --script run.script.json
  # shell commands in a bubblewrap sandbox (workspace only, no network), each one asked for
  $ meta-agent run --goal "run the tests in repo/ and fix what fails" --allow-shell
  # … or let them run unasked, stopped after 20 s each
  $ meta-agent run --goal "build the site" --allow-shell --allow execute_shell --shell-timeout 20 --yes
  # Python files of the workspace, run unasked in the Python sandbox for up to 60 s each
  $ META_AGENT_SANDBOX_TIMEOUT_MS=60000 meta-agent run --goal "compute stats.csv from data.csv with a Python script" --allow execute_python_file --yes
  # with the tools of your MCP servers; the git server's tools run unasked
  $ meta-agent run --goal "summarize the last 5 commits into log.md" --mcp-config mcp.json --allow 'mcp__git__*'
  # continue a run that was stopped (Ctrl+C, a budget, kill -9)
  $ meta-agent run --resume workspace/.meta-agent/runs/Writer-1a2b3c.run.json --max-steps 60
  # kept in PostgreSQL, handed to the workers; answer its questions from anywhere
  $ meta-agent run --database postgres://… --goal "tidy notes/" -w /shared/ws --queue
  $ meta-agent approve 1a2b3c4d5e6f y

Approving: y runs the command, n stops the run, y -N runs this and the next N-1 without asking,
a always allows this command in this workspace, and anything else is sent to the model as feedback.
Deleting a file and running a shell command or a Python file are always asked for unless allowed
(--allow delete_file, --allow execute_shell, --allow execute_python_file, or a); --yes, --continuous
and y -N do not cover them. Ctrl+C once stops the
countdown and asks before the next command; twice saves the run and exits (130). Without a terminal
nothing runs unless --yes, --continuous N or --allow says so.

Settings: a new run keeps its name, role and goals in WORKSPACE/.meta-agent/ai_settings.yaml, in
AutoGPT's layout (ai_name, ai_role, ai_goals). The next start there without --goal, --name or --role
shows them and asks "Continue with the last settings? (y/n)": y runs with them, n asks anew. Without a
terminal they are never taken unasked: pass --ai-settings FILE (any such file, checked: at most 64 KiB,
one line per field, 1 to 5 goals). The file sits in the workspace, so read what is shown before y.

Search, images, audio: google (AutoGPT's, args "input") is offered when META_AGENT_SEARCH_URL names a
SearXNG instance (its JSON API enabled), or BRAVE_SEARCH_API_KEY holds a Brave Search API key;
\`meta-agent doctor\` tries it. generate_image saves images/NAME.png
and read_audio_from_file transcribes a workspace recording, both through the chatbot's OpenAI-compatible
server and key (POST /images/generations, /audio/transcriptions; models META_AGENT_IMAGE_MODEL, default
gpt-image-1, and META_AGENT_TRANSCRIPTION_MODEL, default whisper-1); a server without them tells the model so.

Speak mode (--speak): the speak thought of each step goes to the server's POST /audio/speech
(META_AGENT_SPEECH_MODEL, default tts-1; META_AGENT_SPEECH_VOICE, default alloy), played by aplay, paplay,
ffplay or afplay; else to espeak-ng, espeak, say or spd-say; else the run says it is silent and goes on.

Memory: each step's answer and result are kept in WORKSPACE/.meta-agent/memory/NAMESPACE (by default
the agent's name, so its next runs recall them too) and the closest come back into the prompt. Manage it
with \`meta-agent memory\`. Embeddings come from the embedder model (--embedder-model); without one,
memories are found by their words.

Shell: execute_shell exists only with --allow-shell. Its command line runs with /bin/sh in a
bubblewrap sandbox: the workspace (at /workspace, without its .meta-agent/) is the only folder it can
write, /usr is read-only, nothing else of the machine is there (no home, no /etc but what programs
need), no network, a scrubbed environment (PATH, HOME, LANG, TMPDIR only: no keys), 60 s
(--shell-timeout), and the first and last 1,500 bytes of its output and of its errors. Without a
working bubblewrap the run refuses to start, unless --allow-unsandboxed-shell says to run commands
unconfined (same environment, folder and limits; nothing else is kept from them).

Python: execute_python_file runs a workspace .py file as \`python FILE\` (CPython in WebAssembly,
standard library only) on a copy of the workspace at /workspace, its current folder: no network, no
other files, no input. The files it makes, changes or deletes there are written back through the
workspace's checks when it ends (1,000 files and 16 MiB each way); /tmp and paths outside are its own
copy. It is stopped after META_AGENT_SANDBOX_TIMEOUT_MS (default 10 s) with nothing written back, its
memory capped at META_AGENT_SANDBOX_MEMORY_MB (256); it answers the exit status, the traceback of an
uncaught exception and the first and last 3,000 bytes of its output.

Files: commands see only the workspace folder (default ./workspace); paths outside it, symlinks out of
it and look-alike characters are refused. The run is saved to WORKSPACE/.meta-agent/runs/ after every
step; a command with a side effect never runs twice, even after kill -9.

Ends: task_complete; max_steps, max_tokens, max_cost or max_time (checked before each call is sent;
past 80% of one, every command is asked for); user; loop (the model is warned first); unusable_answers
(three in a row); refused (nothing may run); continuous_limit (the N commands of --continuous N have
run with no terminal to ask for more: no further model call). Exit 0 for task_complete or n, 1 for the
others.

Database: with --database postgres://… (or META_AGENT_DATABASE_URL) the run is kept in PostgreSQL
under its id instead of a run file, and carried as a durable workflow: by this process, with its view
as usual (in a pipe, a command that needs an answer waits for \`meta-agent approve ID\`); if this process
dies, a \`meta-agent worker\` carries it on from its last phase, never running a command with a side
effect twice. --queue hands the run to the workers instead and prints its id. Continue a stopped run
with --database … --resume ID. The workspace must be a folder every machine that carries runs reaches
at the same path (a shared disk, or one machine): runs are not pinned to a worker, so that any worker
can take one over when another dies. A worker carries META_AGENT_GOAL_CONCURRENCY runs at once (default
4); META_AGENT_GOAL_RATE=N/SECONDS starts at most N queued runs in any SECONDS across all workers, for a
model API's rate limit (default none); set both alike on every machine. Keys come from the environment
of the process that carries the run.
${MCP_OPTION_HELP}
${MODEL_OPTIONS_HELP}
${DATABASE_OPTION_HELP}`;

/** Registers `run`. */
export function register(program: Command): void {
  const command = program
    .command('run')
    .description(
      'pursue goals autonomously: the model picks commands until the goals are met (AutoGPT-style)',
    )
    .option('-g, --goal <goal>', 'a goal (repeat for up to 5)', collect, undefined)
    .option('--name <name>', 'the agent’s name (default Agent)')
    .option('--role <role>', 'what the agent is, e.g. "an AI that writes release notes"')
    .option(
      '--ai-settings <file>',
      'take the name, role and goals from an AutoGPT ai_settings.yaml (ai_name, ai_role, ai_goals)',
    )
    .option('-w, --workspace <dir>', 'the only folder its file commands may use (default ./workspace)')
    .option(
      '--resume <file>',
      'continue the run saved in FILE (its key, with --database), with its goals (and its workspace, unless -w)',
    )
    .option(
      '-y, --yes',
      'run every command without asking (deleting, execute_shell and execute_python_file still need --allow)',
    )
    .option('--continuous <n>', 'run N commands without asking, then ask again', positiveInteger)
    .option('--allow <commands>', 'commands that run without asking, comma-separated', list)
    .option('--allow-web <hosts>', 'offer browse_website for these hosts (example.com, *.example.org)', list)
    .option(
      '--allow-private-network',
      'let browse_website and clone_repository reach loopback and private addresses',
    )
    .option(
      '--allow-shell',
      'offer execute_shell: command lines in the workspace, in a bubblewrap sandbox (no network, no other files), asked for every time unless --allow execute_shell',
    )
    .option(
      '--allow-unsandboxed-shell',
      'as --allow-shell, but where bubblewrap is missing or cannot work, run them unconfined (they can read your files and reach the network)',
    )
    .option(
      '--shell-timeout <seconds>',
      'stop an execute_shell command after this long (default 60)',
      positiveNumber,
    )
    .option(
      '--memory <namespace>',
      'remember each step in this long-term memory namespace, and recall from it (default: the agent’s name)',
    )
    .option('--no-memory', 'no long-term memory: nothing remembered or recalled, no memory_add')
    .option(
      '--context-tokens <n>',
      'the model’s context window: prompt and answer always fit in it (default 8192)',
      positiveInteger,
    )
    .option('--max-steps <n>', 'stop after N steps (default 50)', positiveInteger)
    .option('--max-tokens <n>', 'stop before a call would pass N tokens in all', positiveInteger)
    .option('--max-cost <usd>', 'stop before a call could pass USD dollars in all', positiveNumber)
    .option('--max-time <seconds>', 'stop after this many seconds', positiveNumber)
    .addOption(
      new Option(
        '--answers <format>',
        'auto: native tool calls where the server takes them, else the seed’s JSON; json: always the JSON',
      )
        .choices(['auto', 'json'])
        .default('auto'),
    )
    .option('--speak', 'say each step’s speak thought aloud (the model server’s speech, or espeak-ng, say…)')
    .option('--json', 'write the event stream to stdout as JSON lines')
    .option('--trace <file>', 'append every event to FILE as JSON lines')
    .option('--no-tui', 'one line per step even in a terminal (nothing is asked then: use --yes or --allow)')
    .option('--queue', 'with --database: hand the run to the workers and print its id');
  addMcpOption(addDatabaseOption(addModelOptions(command)))
    .addHelpText('after', EXAMPLES)
    .action(async (options: RunOptions) => {
      // execute_javascript and sub-agents run code in the sandbox.
      await restartForSandbox();
      const { runGoals } = await import('../actions/run.js');
      await runGoals(options);
    });
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a number above 0');
  return n;
}
