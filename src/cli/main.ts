import { Command, CommanderError } from 'commander';
import { isUserError } from '../errors.js';
import { commands } from './commands/index.js';
import { version } from './version.js';
import { writeErr } from './terminal.js';

const EXAMPLES = `
Examples:
  $ meta-agent doctor                          check Node, sandbox, Graphviz and your model server
  $ meta-agent ask "Say hello in French"       one streamed completion
  $ meta-agent design "a tutor bot"            design a new agent graph
  $ meta-agent chat tutor_bot.autogram.json    talk to it (a full-screen view in a terminal)

Models: any OpenAI-compatible server. Set OPENAI_API_KEY (OpenAI), or OPENAI_BASE_URL for a local server
(Ollama, LM Studio, vLLM, llama.cpp), or pass --base-url. With nothing set, a server on localhost:11434
(Ollama) or localhost:1234 (LM Studio) is used when one answers.`;

/** The one exit code table every command keeps (README, "Exit codes"), under every command's help. */
const EXIT_CODES = `
Exit codes: 0 done; 1 the work failed (a node, a model call, a design, a doctor check, a run that ended
short of task_complete, or validate found errors); 2 fix the input first (a flag, a missing file, a file
that is not a usable graph, state, run or script, no model server configured); 130 interrupted with Ctrl+C.`;

/** Builds the program; exported so tests can inspect the command tree without spawning a process. */
export function buildProgram(): Command {
  const program = new Command('meta-agent')
    .description('LLM agents as graphs (autograms) that design other graphs and rewrite their own.')
    .version(version(), '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', EXAMPLES)
    .addHelpText('afterAll', EXIT_CODES)
    .exitOverride()
    .configureOutput({ writeErr: (text) => writeErr(text) });
  for (const register of commands) register(program);
  return program;
}

/** Runs the CLI and resolves to the process exit code (EXIT_CODES). */
export async function main(argv: string[]): Promise<number> {
  // A reader that stops early (`meta-agent show x | head`) closes the pipe: that ends the run, quietly.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    return reportError(error);
  }
}

function reportError(error: unknown): number {
  if (error instanceof CommanderError) {
    // Commander has already printed its message; help and version requests end here too.
    return error.exitCode === 0 ? 0 : 2;
  }
  if (isUserError(error)) {
    writeErr(`error: ${error.message}\n`);
    // A hint's later lines line up under its first (an AIPL excerpt's caret stays under its column).
    if (error.hint) writeErr(`hint: ${error.hint.replaceAll('\n', '\n      ')}\n`);
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  writeErr(`error: ${message}\n`);
  if (process.env.META_AGENT_DEBUG) writeErr(`${(error as Error)?.stack ?? ''}\n`);
  else writeErr('hint: this looks like a bug in meta-agent; rerun with META_AGENT_DEBUG=1 for details\n');
  return 1;
}
