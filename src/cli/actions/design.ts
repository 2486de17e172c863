/** What `meta-agent design` does (declared in ../commands/design.ts). */
import { designAgent, loadDesigner, type DesignFailure } from '../../../meta/design.js';
import { designConcurrency } from '../../../meta/limits.js';
import { UserError } from '../../errors.js';
import { EventBus } from '../../events.js';
import type { ResolvedEndpoint } from '../../llm/config.js';
import type { DesignOptions } from '../commands/design.js';
import { designSummary, printStageLines } from '../design-report.js';
import { interruptOnSigint } from '../interrupt.js';
import { modelsFromOptions } from '../model-options.js';
import { plural } from '../words.js';

/** Designs a graph from `description` and writes it, with its views, into the output folder. */
export async function runDesign(description: string, options: DesignOptions): Promise<void> {
  if (!description.trim()) throw new UserError('the description is empty', 2, 'say what the agent is for');
  const name = options.name ?? nameFrom(description);
  if (!/^[A-Za-z0-9][\w-]*$/.test(name))
    throw new UserError(`"${name}" cannot name a graph file`, 2, 'use letters, digits, "_" and "-"');
  const { models, endpoints } = await modelsFromOptions(options);
  const chatbot = endpoints.chatbot;
  const concurrency =
    options.concurrency ?? designConcurrency(chatbot.provider === 'openai' ? chatbot.baseUrl : undefined);
  const designer = await loadDesigner();
  const bus = new EventBus();
  const model = describeEndpoint(chatbot);

  // Ctrl+C (a signal in a pipe, a key in the view) stops the design and keeps its partial work.
  const ctrlC = interruptOnSigint();
  const tty = Boolean(process.stdout.isTTY && process.stdin.isTTY);
  // The terminal UI (Ink, React) is loaded only when it is shown.
  const ui = tty
    ? (await import('../../tui/index.js')).renderDesignUI({ bus, graph: designer, onQuit: ctrlC.interrupt })
    : undefined;
  const stopLines = tty ? undefined : printStageLines(bus, (line) => process.stderr.write(line));
  if (!tty) process.stderr.write(`designing "${description}" with ${model} (concurrency ${concurrency})\n`);
  try {
    const outcome = await designAgent({
      description,
      name,
      outDir: options.output,
      models,
      events: bus,
      designer,
      limits: { concurrency },
      signal: ctrlC.signal,
      ...(options.check ? { check: options.check } : {}),
    });
    // The summary is printed below the finished UI, not under its live region.
    ui?.unmount();
    if (!outcome.ok) throw failureError(outcome);
    process.stdout.write(`${designSummary(outcome, model)}\n`);
  } finally {
    ctrlC.dispose();
    ui?.unmount();
    stopLines?.();
  }
}

/**
 * One line saying where and why the design stopped; the hint says what to do (the error's own advice,
 * or a stronger model when the answers were unusable) and lists the partial work kept.
 */
function failureError(failure: DesignFailure): UserError {
  const { calls, seconds } = failure.figures;
  const kept = `partial work kept in ${failure.kept.join(', ')} (${plural(calls, 'model call')}, ${seconds.toFixed(1)} s)`;
  if (failure.interrupted)
    return new UserError(`design interrupted at the ${failure.stage} stage`, 130, kept);
  const advice = failure.hint ?? 'a stronger model usually gets further (--model)';
  return new UserError(
    `design failed at the ${failure.stage} stage: ${failure.reason}`,
    1,
    `${advice}; ${kept}`,
  );
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

function describeEndpoint(endpoint: ResolvedEndpoint): string {
  return endpoint.provider === 'openai'
    ? `${endpoint.model} at ${endpoint.baseUrl}`
    : `scripted rules ${endpoint.script}`;
}
