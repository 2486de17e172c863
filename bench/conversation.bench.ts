/**
 * Conversation benchmark: what one more reply costs in a conversation already 100, 1 000 and 10 000
 * turns long, and what saving it with `chat --state` writes. The goal is that neither grows with the
 * conversation: each size's figure within 2× of the 100-turn one.
 *
 * The agent chats with a zero-latency model: a chat node whose transition question the classifier
 * answers (so both the chatbot's prompt and the classifier's history are formed from the conversation
 * each reply), under the default history window. The three conversations are grown first, then timed
 * in rounds, one reply of each size per round (interleaved, so the machine's drift hits all sizes
 * alike). Saving goes through the real StateFile in a temporary folder: bytes per reply include the
 * compactions that fell within the rounds.
 *
 * Run: `npx tsc -p . && node --no-node-snapshot dist/bench/conversation.bench.js`
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { StateFile } from '../src/store/conversation-journal.js';
import { Interpreter, type ConversationState } from '../src/engine/index.js';
import { graphFileSchema } from '../src/graph/schema.js';
import { StaticGraph } from '../src/graph/view.js';
import type { LanguageModel, ModelSet } from '../src/llm/types.js';
import { instantModels } from './instant-models.js';
import { printTable, quantiles, verdict } from './stats.js';

/** How much dearer a reply (or its save) may be at any size than at 100 turns. */
export const FLAT_WITHIN = 2;

export interface ConversationBenchRow {
  turns: number;
  replyUs: { median: number; p95: number };
  saveMs: { median: number; p95: number };
  bytesPerReply: number;
  /** Messages in the chatbot's last prompt: what the history window let through. */
  promptMessages: number;
}

const graph = new StaticGraph(
  graphFileSchema.parse({
    name: 'long_chat',
    nodes: [
      { name: 'start1', action: 'chat', instruction: 'Greet the user.', transitions: ['talk'] },
      {
        name: 'talk',
        action: 'chat',
        instruction: 'Answer the user in a sentence or two.',
        transitionQuestion: 'Does the user want to go on?',
        transitions: ['talk', 'wrap_up'],
        transitionChoices: ['they go on', 'they want to stop'],
      },
      { name: 'wrap_up', action: 'chat', instruction: 'Say goodbye.', transitions: ['talk'] },
    ],
  }),
);

/** The instant models, with the chatbot's last message count remembered. */
function countingModels(): { models: ModelSet; lastPrompt: () => number } {
  let messages = 0;
  const base = instantModels.chatbot;
  const chatbot: LanguageModel = {
    ...base,
    stream: (request, onChunk) => ((messages = request.messages.length), base.stream(request, onChunk)),
  };
  return { models: { ...instantModels, chatbot }, lastPrompt: () => messages };
}

const userText = (i: number) => `Message ${i}: tell me a little more about topic number ${i % 97}, please.`;

export async function runConversationBench(
  options: { sizes?: number[]; rounds?: number } = {},
): Promise<ConversationBenchRow[]> {
  const sizes = options.sizes ?? [100, 1_000, 10_000];
  const rounds = options.rounds ?? 300;
  const { models, lastPrompt } = countingModels();
  const agent = await Interpreter.create({ graph, models });
  const dir = await mkdtemp(join(tmpdir(), 'meta-agent-bench-'));
  try {
    const runs = [];
    for (const turns of sizes) {
      let state: ConversationState | undefined;
      for (let i = 0; i < turns; i++)
        state = (await agent.reply(i === 0 ? undefined : userText(i), state)).state;
      const file = new StateFile(join(dir, `${turns}.state`));
      // The first save of a process writes the whole state; the rounds measure the saves after it.
      await file.save(state!);
      runs.push({ turns, state: state!, file, reply: [] as number[], save: [] as number[], prompt: 0 });
    }
    const warmUp = Math.ceil(rounds / 10);
    const bytesBefore = new Map<number, number>();
    for (let round = 0; round < warmUp + rounds; round++) {
      if (round === warmUp) for (const run of runs) bytesBefore.set(run.turns, run.file.bytesWritten);
      for (const run of runs) {
        const started = performance.now();
        const { state } = await agent.reply(userText(run.turns + round), run.state);
        const replied = performance.now();
        await run.file.save(state);
        const saved = performance.now();
        run.state = state;
        run.prompt = lastPrompt();
        if (round < warmUp) continue;
        run.reply.push((replied - started) * 1000);
        run.save.push(saved - replied);
      }
    }
    const rows = runs.map((run) => ({
      turns: run.turns,
      replyUs: quantiles(run.reply),
      saveMs: quantiles(run.save),
      bytesPerReply: (run.file.bytesWritten - bytesBefore.get(run.turns)!) / rounds,
      promptMessages: run.prompt,
    }));
    printRows(rows, rounds);
    return rows;
  } finally {
    agent.dispose();
    await rm(dir, { recursive: true, force: true });
  }
}

function printRows(rows: ConversationBenchRow[], rounds: number): void {
  const [first] = rows;
  const times = (value: number, base: number) => `${(value / base).toFixed(2)}×`;
  const within = (value: number, base: number) => verdict(value <= FLAT_WITHIN * base);
  printTable(
    `conversation benchmark: one more reply at each length, ${rounds} rounds interleaved, zero-latency model, Node ${process.version}`,
    [
      'turns',
      'reply µs',
      'p95',
      '÷ first',
      'save ms',
      'p95',
      'bytes/reply',
      '÷ first',
      'prompt msgs',
      'goal',
      '',
    ],
    rows.map((row) => [
      String(row.turns),
      row.replyUs.median.toFixed(0),
      row.replyUs.p95.toFixed(0),
      times(row.replyUs.median, first!.replyUs.median),
      row.saveMs.median.toFixed(2),
      row.saveMs.p95.toFixed(2),
      row.bytesPerReply.toFixed(0),
      times(row.bytesPerReply, first!.bytesPerReply),
      String(row.promptMessages),
      `reply, bytes ≤ ${FLAT_WITHIN}× first`,
      [
        within(row.replyUs.median, first!.replyUs.median),
        within(row.bytesPerReply, first!.bytesPerReply),
      ].includes('missed')
        ? 'missed'
        : 'met',
    ]),
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runConversationBench();
