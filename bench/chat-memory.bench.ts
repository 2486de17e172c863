/**
 * `chat --state` memory benchmark: the resident memory of `meta-agent chat GRAPH --state FILE` (the
 * built CLI, in lines through a pipe, on the zero-latency model of serve-processes.ts) at reply 200,
 * 2 000 and 10 000 of one conversation. The goal: flat, each figure within 1.2× of reply 200's.
 * RSS is read from /proc/PID/status (VmRSS) as a user's `top` would see it, without a collection.
 *
 * Run: `npx tsc -p . && node --no-node-snapshot dist/bench/chat-memory.bench.js`
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { GRAPH, userText } from './serve.bench.js';
import { startChat, startModel } from './serve-processes.js';
import { printTable, verdict } from './stats.js';

/** How much more a later reply's resident memory may be than reply 200's. */
export const FLAT_WITHIN = 1.2;

export interface ChatMemoryRow {
  reply: number;
  rssMb: number;
}

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

export async function runChatMemoryBench(options: { marks?: number[] } = {}): Promise<ChatMemoryRow[]> {
  const marks = options.marks ?? [200, 2_000, 10_000];
  const dir = await mkdtemp(join(tmpdir(), 'meta-agent-chat-memory-'));
  const model = await startModel();
  try {
    const graph = join(dir, 'helpdesk.autogram.json');
    await writeFile(graph, JSON.stringify(GRAPH));
    const chat = await startChat(graph, model.url, join(dir, 'chat.state'), dir);
    const rows: ChatMemoryRow[] = [];
    for (let reply = 1; reply <= Math.max(...marks); reply++) {
      await chat.reply(userText(reply));
      if (marks.includes(reply)) rows.push({ reply, rssMb: await rssMb(chat.pid) });
    }
    await chat.stop();
    const [first] = rows;
    printTable(
      `chat --state, resident memory of the process by reply; goal: flat (within ${FLAT_WITHIN}× of reply ${first!.reply})`,
      ['reply', 'RSS MB', '÷ first', 'goal'],
      rows.map((row) => [
        String(row.reply),
        row.rssMb.toFixed(0),
        `${(row.rssMb / first!.rssMb).toFixed(2)}×`,
        verdict(row.rssMb <= FLAT_WITHIN * first!.rssMb),
      ]),
    );
    return rows;
  } finally {
    model.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runChatMemoryBench();
