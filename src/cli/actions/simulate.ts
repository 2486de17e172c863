/** What `meta-agent simulate` does (declared in ../commands/simulate.ts). */
import { randomInt } from 'node:crypto';
import { seededRandom, simulateConversations, type SimulationReport } from '../../engine/simulate.js';
import { UserError } from '../../errors.js';
import { Interrupted, untilAborted } from '../../interrupt.js';
import { formatUsage } from '../../llm/usage.js';
import { interruptOnSigint } from '../interrupt.js';
import { openAgent } from '../open-agent.js';
import type { GoalLoopOptionValues, ModelOptionValues } from '../options.js';
import { formatSummary, progressLine, summarize, transcriptOf } from '../simulation-report.js';
import { writeOut, writeErr } from '../terminal.js';

/** `simulate`'s options as commander parses them. */
export interface SimulateOptions extends ModelOptionValues, GoalLoopOptionValues {
  conversations: number;
  turns: number;
  seed?: number;
  json?: boolean;
  selfReferential?: boolean;
}

/** Simulates the conversations with the graph at `path`, with progress on stderr and the report on stdout. */
export async function runSimulate(path: string, options: SimulateOptions): Promise<void> {
  const agent = await openAgent(path, options, {
    selfReferential: options.selfReferential,
    goalLoop: options,
  });
  const seed = options.seed ?? randomInt(2 ** 31);
  const rng = seededRandom(seed);
  const count = options.conversations;
  const noun = count === 1 ? 'conversation' : 'conversations';
  writeErr(`simulating ${count} ${noun} of ${agent.graph.name} (seed ${seed})\n`);
  const reports: SimulationReport[] = [];
  // Ctrl+C stops the run; the report covers the conversations that finished.
  const ctrlC = interruptOnSigint();
  let interrupted = false;
  try {
    // One conversation per call, so each reports progress; the shared random source keeps the
    // samples those of a single run of `count`.
    for (let i = 1; i <= count; i++) {
      const simulated = simulateConversations(agent.interpreter, { count: 1, turns: options.turns, rng });
      const report = await untilAborted(simulated, ctrlC.signal);
      reports.push(report);
      writeErr(`${progressLine(i, count, report.conversations[0]!)}\n`);
    }
  } catch (error) {
    if (!(error instanceof Interrupted)) throw error;
    interrupted = true;
  } finally {
    ctrlC.dispose();
    agent.interpreter.dispose();
  }
  if (interrupted && reports.length === 0)
    throw new UserError('simulation interrupted before a conversation finished', 130);
  const summary = summarize(agent.graph, reports, { seed, turns: options.turns });
  if (options.json) {
    const transcripts = reports.flatMap((r) => r.conversations).map((c) => transcriptOf(agent.graph, c));
    writeOut(`${JSON.stringify({ ...summary, transcripts }, null, 2)}\n`);
  } else writeOut(`${formatSummary(summary)}\n`);
  writeErr(`${formatUsage(agent.meter.total())}\n`);
  if (interrupted)
    throw new UserError(
      `simulation interrupted after ${reports.length} of ${count} ${noun}`,
      130,
      'the report covers the conversations that finished',
    );
}
