/**
 * `meta-agent doctor`: checks what meta-agent needs, one line each with the fix when something is
 * wrong: Node, the isolated-vm sandbox, the Python sandbox, Graphviz, the model configuration, each endpoint and its
 * models or the embedded model's runtime and file, and a one-token classification whose answer doctor
 * knows, then each MCP server the user configured, and the search provider of `google`. Exit 0 when no check failed
 * (warnings allowed), 1 when one did, 2 when no model is configured at all.
 */
import type { Command } from 'commander';
import type { McpOptionValues } from '../mcp-setup.js';
import {
  MCP_OPTION_HELP,
  MODEL_OPTIONS_HELP,
  addMcpOption,
  addModelOptions,
  type ModelOptionValues,
} from '../options.js';
import { restartForSandbox } from '../sandbox-process.js';

const EXAMPLES = `
Examples:
  $ meta-agent doctor                                        whatever the environment configures
  $ meta-agent doctor --base-url http://127.0.0.1:11434/v1   check an Ollama server
  $ meta-agent doctor --model gpt-4o --classifier-model gpt-4o-mini
  $ meta-agent doctor --provider local                       check the embedded model: runtime, file, threads, GPU
  $ meta-agent doctor --mcp-config mcp.json                  start each MCP server and list its tools
  $ META_AGENT_SEARCH_URL=http://localhost:8888 meta-agent doctor   try the SearXNG that google searches

The classifier is asked which of three words is a colour, twice, the choices reordered in between: it
passes only when it is right both times. Doctor waits 5 s for a server's model list and 60 s for an
answer; META_AGENT_TIMEOUT_MS (milliseconds) sets both.

With no server configured or answering, doctor checks the embedded model instead; it downloads nothing,
and says what the first use will fetch (a warning, not a failure).

Each MCP server of --mcp-config (else CONFIG_DIR/mcp.json) is started, listed and stopped; one that
fails is a failed check, with why (it exited, never answered, wrote what is not MCP).

The search provider of run's google command (META_AGENT_SEARCH_URL, a SearXNG instance, or Brave with
BRAVE_SEARCH_API_KEY) is named and asked one query; without one, runs do not offer google.

Exit status: 0 no check failed (warnings allowed), 1 a check failed, 2 no model is configured, or
META_AGENT_TIMEOUT_MS is not a number.
${MODEL_OPTIONS_HELP}
${MCP_OPTION_HELP}`;

/** Registers `doctor`. */
export function register(program: Command): void {
  const command = program
    .command('doctor')
    .description(
      'check Node, the JavaScript and Python sandboxes, Graphviz, your model server or embedded model and your MCP servers, and say how to fix what fails',
    );
  addMcpOption(addModelOptions(command))
    .addHelpText('after', EXAMPLES)
    .action(async (options: ModelOptionValues & McpOptionValues) => {
      // One of the checks runs code in the sandbox.
      await restartForSandbox();
      const { runDoctor } = await import('../actions/doctor.js');
      await runDoctor(options);
    });
}
