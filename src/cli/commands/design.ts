/**
 * `meta-agent design DESCRIPTION`: designs an agent graph with the designer meta-autogram and writes
 * `NAME.autogram.json` with its `.dot`, `.svg` and `.html` views. Progress shows in the terminal UI when
 * stdout is a terminal, else as one line per stage on stderr; the summary goes to stdout.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { designAgent, loadDesigner, type DesignFailure } from '../../../meta/design.js';
import { DEFAULT_DESIGN_LIMITS } from '../../../meta/host.js';
import { UserError } from '../../errors.js';
import { EventBus } from '../../events.js';
import type { ResolvedEndpoint } from '../../llm/config.js';
import { designSummary, plural, printStageLines } from '../design-report.js';
import {
  MODEL_OPTIONS_HELP,
  addModelOptions,
  modelsFromOptions,
  type ModelOptionValues,
} from '../model-options.js';

const EXAMPLES = `
Examples:
  $ meta-agent design "a tutor bot that teaches fractions"
  $ meta-agent design "a recruiter that screens candidates" -o agents --name recruiter
  $ meta-agent design "a support bot for a bike shop" --check 5        simulate 5 conversations, repair
  $ meta-agent design "a tutor bot" --base-url http://127.0.0.1:11434/v1 --model llama3.2

The designer is itself a graph (meta/designer.autogram.json): outline -> DOT draft -> Graphviz parse
(problems go back to the model) -> every node's fields, written concurrently -> assemble, lint, repair.
When the model's answers cannot be used after the allowed tries, the partial work (outline, DOT draft,
the model's last answer) is kept in the output folder as NAME.partial.*.
${MODEL_OPTIONS_HELP}`;

/** Per-node calls in flight for a server on this machine, which mostly answers a few at a time. */
const LOCAL_CONCURRENCY = 4;

interface DesignOptions extends ModelOptionValues {
  output: string;
  name?: string;
  check?: number;
  concurrency?: number;
}

/** Registers `design`. */
export function register(program: Command): void {
  const command = program
    .command('design')
    .description('design a new agent graph from a description (the designer is itself an autogram)')
    .argument('<description>', 'what the agent is for, e.g. "a tutor bot that teaches fractions"')
    .option('-o, --output <dir>', 'folder to write the graph and its views into', '.')
    .option('--name <name>', 'the graph name and file name (default: from the description)')
    .option('--check <n>', 'simulate N conversations, report coverage and agreement, repair', positiveInt)
    .addOption(
      new Option(
        '--concurrency <n>',
        `per-node model calls in flight (default ${DEFAULT_DESIGN_LIMITS.concurrency}, or ${LOCAL_CONCURRENCY} for a server on this machine)`,
      ).argParser(positiveInt),
    );
  addModelOptions(command)
    .addHelpText('after', EXAMPLES)
    .action(async (description: string, options: DesignOptions) => {
      if (!description.trim())
        throw new UserError('the description is empty', 2, 'say what the agent is for');
      const name = options.name ?? nameFrom(description);
      if (!/^[A-Za-z0-9][\w-]*$/.test(name))
        throw new UserError(`"${name}" cannot name a graph file`, 2, 'use letters, digits, "_" and "-"');
      const { models, endpoints } = await modelsFromOptions(options);
      const concurrency = options.concurrency ?? defaultConcurrency(endpoints.chatbot);
      const designer = await loadDesigner();
      const bus = new EventBus();
      const model = describeEndpoint(endpoints.chatbot);

      const tty = Boolean(process.stdout.isTTY && process.stdin.isTTY);
      // The terminal UI (Ink, React) is loaded only when it is shown.
      const ui = tty
        ? (await import('../../tui/index.js')).renderDesignUI({
            bus,
            graph: designer,
            onQuit: () => process.exit(130),
          })
        : undefined;
      const stopLines = tty ? undefined : printStageLines(bus, (line) => process.stderr.write(line));
      if (!tty)
        process.stderr.write(`designing "${description}" with ${model} (concurrency ${concurrency})\n`);
      try {
        const outcome = await designAgent({
          description,
          name,
          outDir: options.output,
          models,
          events: bus,
          designer,
          limits: { concurrency },
          ...(options.check ? { check: options.check } : {}),
        });
        // The summary is printed below the finished UI, not under its live region.
        ui?.unmount();
        if (!outcome.ok) throw failureError(outcome);
        process.stdout.write(`${designSummary(outcome, model)}\n`);
      } finally {
        ui?.unmount();
        stopLines?.();
      }
    });
}

/**
 * One line saying where and why the design stopped; the hint says what to do (the error's own advice,
 * or a stronger model when the answers were unusable) and lists the partial work kept.
 */
function failureError(failure: DesignFailure): UserError {
  const { calls, seconds } = failure.figures;
  const advice = failure.hint ?? 'a stronger model usually gets further (--model)';
  return new UserError(
    `design failed at the ${failure.stage} stage: ${failure.reason}`,
    1,
    `${advice}; partial work kept in ${failure.kept.join(', ')} (${plural(calls, 'model call')}, ${seconds.toFixed(1)} s)`,
  );
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number of at least 1');
  return n;
}

/** `tutor_bot_teaches` from "a tutor bot that teaches fractions": the first three words that say something. */
function nameFrom(description: string): string {
  const filler = new Set([
    'a',
    'an',
    'the',
    'that',
    'which',
    'who',
    'for',
    'to',
    'of',
    'and',
    'with',
    'my',
    'our',
  ]);
  const words = description
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9\s]/g, ' ')
    .split(/\s+/)
    .filter((w) => w && !filler.has(w));
  return words.slice(0, 3).join('_') || 'agent';
}

/** A server on this machine usually runs a few requests at once and queues the rest past the timeout. */
function defaultConcurrency(endpoint: ResolvedEndpoint): number {
  if (endpoint.provider !== 'openai') return DEFAULT_DESIGN_LIMITS.concurrency;
  const host = new URL(endpoint.baseUrl).hostname;
  return ['localhost', '127.0.0.1', '[::1]', '::1', '0.0.0.0'].includes(host)
    ? LOCAL_CONCURRENCY
    : DEFAULT_DESIGN_LIMITS.concurrency;
}

function describeEndpoint(endpoint: ResolvedEndpoint): string {
  return endpoint.provider === 'openai'
    ? `${endpoint.model} at ${endpoint.baseUrl}`
    : `scripted rules ${endpoint.script}`;
}
