/** What `meta-agent design` does (declared in ../commands/design.ts). */
import { designAgent, loadDesigner, type DesignFailure } from '../../../meta/design.js';
import { designConcurrency } from '../../../meta/limits.js';
import { designFilesPresent, freeDesignName } from '../../../meta/output.js';
import { agentOpener } from '../../agent/open.js';
import { UserError } from '../../errors.js';
import { EventBus } from '../../events.js';
import type { ResolvedEndpoint } from '../../llm/config.js';
import { fileStore } from '../../store/files.js';
import { designSummary, printStageLines } from '../design-report.js';
import { interruptOnSigint } from '../interrupt.js';
import { modelsFromOptions } from '../model-options.js';
import type { ModelOptionValues } from '../options.js';
import { plural } from '../words.js';
import { writeOut, writeErr } from '../terminal.js';

/** `design`'s options as commander parses them. */
export interface DesignOptions extends ModelOptionValues {
  output: string;
  name?: string;
  force?: boolean;
  check?: number;
  concurrency?: number;
}

/** Designs a graph from `description` and writes it, with its views, into the output folder. */
export async function runDesign(description: string, options: DesignOptions): Promise<void> {
  if (!description.trim()) throw new UserError('the description is empty', 2, 'say what the agent is for');
  const name = await chooseName(description, options);
  const { models, endpoints } = await modelsFromOptions(options);
  const chatbot = endpoints.chatbot;
  // The embedded model answers one call at a time; more in flight would only queue.
  const concurrency =
    options.concurrency ??
    (chatbot.provider === 'local'
      ? 1
      : designConcurrency(chatbot.provider === 'openai' ? chatbot.baseUrl : undefined));
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
  const stopLines = tty ? undefined : printStageLines(bus, (line) => writeErr(line));
  if (!tty) writeErr(`designing "${description}" with ${model} (concurrency ${concurrency})\n`);
  try {
    const outcome = await designAgent({
      description,
      name,
      outDir: options.output,
      models,
      open: agentOpener({ models, events: bus, store: fileStore(), folder: options.output }),
      events: bus,
      designer,
      limits: { concurrency },
      signal: ctrlC.signal,
      ...(options.check ? { check: options.check } : {}),
    });
    // The summary is printed below the finished UI, not under its live region.
    ui?.unmount();
    if (!outcome.ok) throw failureError(outcome);
    writeOut(`${designSummary(outcome, model)}\n`);
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

/**
 * The graph's name, whose files must not overwrite an earlier design's unless `--force` says so: a name
 * the user gave is then refused (they meant that one), a name from the description moves on to a free
 * one (`NAME_2`, …), which stderr reports.
 */
async function chooseName(description: string, options: DesignOptions): Promise<string> {
  const name = options.name ?? nameFrom(description);
  if (!/^[\p{L}\p{N}][\p{L}\p{M}\p{N}_-]*$/u.test(name) || Buffer.byteLength(name) > MAX_NAME_BYTES)
    throw new UserError(
      `"${name}" cannot name a graph file`,
      2,
      `use letters, digits, "_" and "-", at most ${MAX_NAME_BYTES} bytes`,
    );
  if (options.force) return name;
  const taken = await designFilesPresent(options.output, name);
  if (taken.length === 0) return name;
  if (options.name !== undefined)
    throw new UserError(`${taken[0]} already exists`, 2, 'pass --force to overwrite it, or another --name');
  const free = await freeDesignName(options.output, name);
  writeErr(
    `note: ${taken[0]} already exists: naming this design ${free} (--force overwrites, --name picks a name)\n`,
  );
  return free;
}

/**
 * `tutor_bot_teaches` from "a tutor bot that teaches fractions": the first three words that say
 * something, then the numbers that follow them ("a tutor bot number 8" is `tutor_bot_number_8`). Words
 * of any script count (家庭教師ボット stays itself); accents on Latin letters are dropped (café: cafe).
 */
export function nameFrom(description: string): string {
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
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}]+/gu, ' ')
    .split(' ')
    .map(latinFolded)
    .filter((w) => /^[\p{L}\p{N}]/u.test(w) && !filler.has(w));
  const numbers = words.slice(3).filter((w) => /^\p{N}+$/u.test(w));
  const name = [...words.slice(0, 3), ...numbers.slice(0, 2)].join('_');
  return name === '' ? 'agent' : [...name].slice(0, MAX_NAME_CHARS).join('').replace(/_+$/, '');
}

/** A name from a description is cut to this many characters; the file name stays short in any script. */
const MAX_NAME_CHARS = 40;

/** File systems allow 255 bytes in a name; `.partial.last-answer.txt` and `_NN` must fit beside it. */
const MAX_NAME_BYTES = 200;

/** `cafe` for `café`: a word that is Latin once its accents go loses them; other scripts stay whole. */
function latinFolded(word: string): string {
  const folded = word.normalize('NFKD').replace(/\p{M}/gu, '');
  return /^[a-z0-9]+$/.test(folded) ? folded : word;
}

function describeEndpoint(endpoint: ResolvedEndpoint): string {
  if (endpoint.provider === 'openai') return `${endpoint.model} at ${endpoint.baseUrl}`;
  if (endpoint.provider === 'local') return `the embedded model ${endpoint.model}`;
  return `scripted rules ${endpoint.script}`;
}
