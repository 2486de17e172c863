/**
 * Serve benchmark: `meta-agent serve` as a user starts it (the built CLI, `--port 0`, its JSON request
 * log on stderr), serving a graph of chat nodes with a transition question, on a zero-latency model in a
 * process of its own (instant-server.ts), so that a turn is a real one: the classifier picks the
 * transition, the chatbot replies, the state and the catalog entry are saved. Three figures:
 *
 * - **turns per second** at 1, 10 and 100 conversations at once, each sending its turns one after
 *   another over `POST /v1/chat/completions` with `X-Conversation-Id`; with the server's own time per
 *   turn (p50, p99) from its log. Goal: ≥ 300 turns/s at 100;
 * - **overhead over `chat --state`**: the same graph and model in `meta-agent chat GRAPH --state FILE`,
 *   fed lines through a pipe once its opening reply is out (its start is not timed), one reply timed
 *   from the line written to the reply's line read; a turn of each side in every round, the first side
 *   alternating. The overhead is the median of each round's difference, the server's own time less
 *   chat's. Goal: < 5 ms;
 * - **memory per idle conversation**: a server of its own (with memory-probe.ts) opens 200, then 1 000
 *   conversations of one turn each; its heap and RSS after a garbage collection, less what it held
 *   before, over the conversations.
 *
 * The clients are `fetch` (undici) with its default keep-alive, not the `openai` package: both speak
 * the same HTTP, but the benchmark's clients share this machine's cores with the server, and fetch does
 * the least work a request. Each conversation sends only its new message: with `X-Conversation-Id` the
 * server takes nothing else from the body.
 *
 * `BENCH_SERVE_PROFILE=DIR` writes a CPU profile of the throughput server into DIR (`node --cpu-prof`).
 *
 * Run: `npx tsc -p . && node scripts/bundle-cli.js && node --no-node-snapshot bench/run.js serve`
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  cpuMsOf,
  startChat,
  startModel,
  startServe,
  type ServeProcess,
  type ServerMemory,
} from './serve-processes.js';
import { percentile, printTable, verdict } from './stats.js';

/** The goals: turns a second at 100 conversations, and the server's time beyond chat's per reply. */
export const GOALS = { turnsPerSecond: 300, atConversations: 100, overheadMs: 5 };

/** Conversations at once, and the turns each sends in a round: some hundreds of turns a round. */
const LEVELS = [
  { conversations: 1, turns: 150 },
  { conversations: 10, turns: 30 },
  { conversations: 100, turns: 10 },
];
/** Counted rounds of every level, after one that is not (it also starts the conversations). */
const ROUNDS = 3;
/** Counted turns of each side of the comparison with chat, after WARM_TURNS that are not. */
const COMPARE_TURNS = 200;
const WARM_TURNS = 100;
/** Idle conversations held, cumulatively, and how many are opened at once. */
const IDLE_SIZES = [200, 1_000];
const OPENING_AT_ONCE = 10;

export const GRAPH = {
  format: 'meta-agent/autogram@1',
  name: 'helpdesk',
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
};

export const userText = (i: number) =>
  `Message ${i}: tell me a little more about topic number ${i % 97}, please.`;

export interface ThroughputRow {
  conversations: number;
  turnsPerRound: number;
  /** Median over the rounds. */
  turnsPerSecond: number;
  serverMs: { p50: number; p99: number };
  roundTripMs: { p50: number; p99: number };
  /** CPU milliseconds a turn (all rounds' CPU over all their turns) of each process. */
  cpuMsPerTurn: { server: number; model: number; clients: number };
  /** The server's CPU time over the rounds' wall time: near 1, it was bound by its one thread. */
  serverBusy: number;
}

export interface OverheadRow {
  side: 'serve' | 'chat --state';
  replies: number;
  ms: { p50: number; p99: number };
}

export interface IdleMemoryRow {
  conversations: number;
  /** Bytes per conversation, after a garbage collection, over what the server held before. */
  heapPerConversation: number;
  rssPerConversation: number;
  after: ServerMemory;
}

export interface ServeBenchResult {
  /** The machine's one-minute load average when the benchmark began: other work shares its cores. */
  loadBefore: number;
  throughput: ThroughputRow[];
  overhead: { rows: OverheadRow[]; medianMs: number; roundTripMedianMs: number };
  idle: { before: ServerMemory; rows: IdleMemoryRow[] };
}

export async function runServeBench(): Promise<ServeBenchResult> {
  const loadBefore = loadavg()[0]!;
  const dir = await mkdtemp(join(tmpdir(), 'meta-agent-serve-bench-'));
  const graph = join(dir, 'helpdesk.autogram.json');
  await writeFile(graph, JSON.stringify(GRAPH));
  const model = await startModel();
  try {
    const profileDir = process.env.BENCH_SERVE_PROFILE;
    const server = await startServe(graph, model.url, join(dir, 'serve'), profileDir ? { profileDir } : {});
    let throughput: ThroughputRow[];
    let overhead: ServeBenchResult['overhead'];
    try {
      const client = new Client(server.url);
      throughput = await measureThroughput(server, client, model.pid);
      overhead = await compareWithChat(server, client, { graph, modelUrl: model.url, dir });
    } finally {
      await server.stop();
    }
    const idle = await measureIdleMemory(graph, model.url, join(dir, 'idle'));
    const result = { loadBefore, throughput, overhead, idle };
    print(result);
    return result;
  } finally {
    model.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** A client of the server's OpenAI route, counting the chat completions it sent. */
export class Client {
  sent = 0;
  constructor(readonly url: string) {}

  /** One turn of `conversation`; resolves with its round trip in ms. */
  async turn(conversation: string, text: string): Promise<number> {
    const started = performance.now();
    this.sent++;
    const response = await fetch(`${this.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-conversation-id': conversation },
      body: JSON.stringify({ model: GRAPH.name, messages: [{ role: 'user', content: text }] }),
    });
    const body = (await response.json()) as { choices?: { message: { content: string } }[] };
    const elapsed = performance.now() - started;
    const reply = body.choices?.[0]?.message.content;
    if (!response.ok || reply !== 'ok')
      throw new Error(`conversation ${conversation}: ${response.status} ${JSON.stringify(body)}`);
    return elapsed;
  }

  /** `turns` turns of `conversation`, one after another; their round trips. */
  async turns(conversation: string, turns: number, first: number): Promise<number[]> {
    const trips: number[] = [];
    for (let i = 0; i < turns; i++) trips.push(await this.turn(conversation, userText(first + i)));
    return trips;
  }
}

/** Every level in every round, in turn, so a slow moment of the machine is spread over them all. */
async function measureThroughput(
  server: ServeProcess,
  client: Client,
  modelPid: number,
): Promise<ThroughputRow[]> {
  const samples = LEVELS.map((level) => ({
    level,
    ids: Array.from({ length: level.conversations }, (_, i) => `c${level.conversations}-${i}`),
    rates: [] as number[],
    serverMs: [] as number[],
    roundTripMs: [] as number[],
    cpuMs: { server: 0, model: 0, clients: 0 },
    seconds: 0,
  }));
  const cpu = async () => ({
    server: await cpuMsOf(server.pid),
    model: await cpuMsOf(modelPid),
    clients: process.cpuUsage().user / 1000 + process.cpuUsage().system / 1000,
  });
  for (let round = -1; round < ROUNDS; round++) {
    for (const sample of samples) {
      const { conversations, turns } = sample.level;
      const logged = client.sent;
      const cpuBefore = await cpu();
      const started = performance.now();
      const trips = await Promise.all(sample.ids.map((id) => client.turns(id, turns, (round + 1) * turns)));
      const seconds = (performance.now() - started) / 1000;
      const cpuAfter = await cpu();
      await server.logged(client.sent);
      const records = server.turns.slice(logged, client.sent);
      const failed = records.find((record) => record.status !== 200);
      if (failed) throw new Error(`the server logged status ${failed.status} for ${failed.conversation}`);
      // The first round starts the conversations and warms the server up.
      if (round < 0) continue;
      sample.rates.push((conversations * turns) / seconds);
      sample.seconds += seconds;
      sample.serverMs.push(...records.map((record) => record.ms));
      sample.roundTripMs.push(...trips.flat());
      for (const side of ['server', 'model', 'clients'] as const)
        sample.cpuMs[side] += cpuAfter[side] - cpuBefore[side];
    }
  }
  return samples.map(({ level, rates, serverMs, roundTripMs, cpuMs, seconds }) => {
    const counted = ROUNDS * level.conversations * level.turns;
    return {
      conversations: level.conversations,
      turnsPerRound: level.conversations * level.turns,
      turnsPerSecond: percentile(rates, 0.5),
      serverMs: spread(serverMs),
      roundTripMs: spread(roundTripMs),
      cpuMsPerTurn: {
        server: cpuMs.server / counted,
        model: cpuMs.model / counted,
        clients: cpuMs.clients / counted,
      },
      serverBusy: cpuMs.server / 1000 / seconds,
    };
  });
}

/**
 * One conversation on the server and one `chat --state` process, a reply of each a round, the first
 * side alternating; the server's own time and chat's reply time, and the median of their differences.
 */
async function compareWithChat(
  server: ServeProcess,
  client: Client,
  setup: { graph: string; modelUrl: string; dir: string },
): Promise<ServeBenchResult['overhead']> {
  const chat = await startChat(setup.graph, setup.modelUrl, join(setup.dir, 'chat.state.json'), setup.dir);
  const serve = { own: [] as number[], trip: [] as number[] };
  const chatMs: number[] = [];
  try {
    // The opening turn, as chat's was before its first line.
    await client.turn('solo', userText(0));
    for (let round = 0; round < WARM_TURNS + COMPARE_TURNS; round++) {
      const text = userText(round + 1);
      const serveTurn = async () => {
        const trip = await client.turn('solo', text);
        await server.logged(client.sent);
        const record = server.turns[client.sent - 1]!;
        if (record.conversation !== 'solo')
          throw new Error(`the log's last turn is ${record.conversation}'s`);
        return { own: record.ms, trip };
      };
      let turn: { own: number; trip: number };
      let chatTurn: number;
      if (round % 2 === 0) {
        turn = await serveTurn();
        chatTurn = await chat.reply(text);
      } else {
        chatTurn = await chat.reply(text);
        turn = await serveTurn();
      }
      if (round < WARM_TURNS) continue;
      serve.own.push(turn.own);
      serve.trip.push(turn.trip);
      chatMs.push(chatTurn);
    }
  } finally {
    await chat.stop();
  }
  const differences = (side: number[]) => side.map((ms, i) => ms - chatMs[i]!);
  return {
    rows: [
      { side: 'serve', replies: COMPARE_TURNS, ms: spread(serve.own) },
      { side: 'chat --state', replies: COMPARE_TURNS, ms: spread(chatMs) },
    ],
    medianMs: percentile(differences(serve.own), 0.5),
    roundTripMedianMs: percentile(differences(serve.trip), 0.5),
  };
}

/** A server of its own opens conversations of one turn each, and its memory is read at each size. */
async function measureIdleMemory(
  graph: string,
  modelUrl: string,
  dataDir: string,
): Promise<ServeBenchResult['idle']> {
  const server = await startServe(graph, modelUrl, dataDir, { probeMemory: true });
  try {
    const client = new Client(server.url);
    // What a server holds once it has served at all (the model client, tiktoken, the JIT's code).
    for (let i = 0; i < 3; i++)
      await Promise.all(['w1', 'w2', 'w3'].map((id) => client.turn(id, userText(i))));
    const before = await server.memory();
    const rows: IdleMemoryRow[] = [];
    let opened = 0;
    for (const size of IDLE_SIZES) {
      const ids = Array.from({ length: size - opened }, (_, i) => `idle-${opened + i}`);
      for (let at = 0; at < ids.length; at += OPENING_AT_ONCE)
        await Promise.all(ids.slice(at, at + OPENING_AT_ONCE).map((id) => client.turn(id, userText(0))));
      opened = size;
      const after = await server.memory();
      rows.push({
        conversations: size,
        heapPerConversation: (after.heapUsed - before.heapUsed) / size,
        rssPerConversation: (after.rss - before.rss) / size,
        after,
      });
    }
    return { before, rows };
  } finally {
    await server.stop();
  }
}

export function spread(values: readonly number[]): { p50: number; p99: number } {
  return { p50: percentile(values, 0.5), p99: percentile(values, 0.99) };
}

function print({ loadBefore, throughput, overhead, idle }: ServeBenchResult): void {
  const ms = (value: number) => value.toFixed(1);
  printTable(
    `serve benchmark: turns per second, zero-latency model, ${ROUNDS} rounds of every level interleaved, fetch with keep-alive, Node ${process.version}, ${cpus().length} cores, load average ${loadBefore.toFixed(1)} before`,
    [
      'conversations',
      'turns/round',
      'turns/s',
      'server ms p50',
      'p99',
      'round trip ms p50',
      'p99',
      'CPU ms/turn: server',
      'model',
      'clients',
      'server busy',
      'goal',
      '',
    ],
    throughput.map((row) => {
      const goal = row.conversations === GOALS.atConversations;
      return [
        String(row.conversations),
        String(row.turnsPerRound),
        row.turnsPerSecond.toFixed(0),
        ms(row.serverMs.p50),
        ms(row.serverMs.p99),
        ms(row.roundTripMs.p50),
        ms(row.roundTripMs.p99),
        row.cpuMsPerTurn.server.toFixed(2),
        row.cpuMsPerTurn.model.toFixed(2),
        row.cpuMsPerTurn.clients.toFixed(2),
        `${(row.serverBusy * 100).toFixed(0)}%`,
        goal ? `≥ ${GOALS.turnsPerSecond} turns/s` : '',
        goal ? verdict(row.turnsPerSecond >= GOALS.turnsPerSecond) : '',
      ];
    }),
  );
  console.log('');
  printTable(
    `serve benchmark: one reply, the server's own time (its log) beside chat --state's (line in to reply out), one of each a round, ${overhead.rows[0]!.replies} rounds`,
    ['side', 'replies', 'ms p50', 'p99', 'overhead ms p50', 'goal', ''],
    [
      ...overhead.rows.map((row) => [
        row.side,
        String(row.replies),
        ms(row.ms.p50),
        ms(row.ms.p99),
        row.side === 'serve' ? ms(overhead.medianMs) : '–',
        row.side === 'serve' ? `< ${GOALS.overheadMs} ms` : '',
        row.side === 'serve' ? verdict(overhead.medianMs < GOALS.overheadMs) : '',
      ]),
    ],
  );
  console.log(
    `(the round trip a client sees, fetch included, is ${ms(overhead.roundTripMedianMs)} ms over chat's reply at the median)`,
  );
  console.log('');
  const kib = (bytes: number) => (bytes / 1024).toFixed(1);
  const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
  printTable(
    `serve benchmark: memory per idle conversation (one turn each), after a garbage collection; before: heap ${mib(idle.before.heapUsed)} MiB, RSS ${mib(idle.before.rss)} MiB`,
    ['conversations', 'heap MiB', 'RSS MiB', 'heap KiB/conversation', 'RSS KiB/conversation', 'goal'],
    idle.rows.map((row) => [
      String(row.conversations),
      mib(row.after.heapUsed),
      mib(row.after.rss),
      kib(row.heapPerConversation),
      kib(row.rssPerConversation),
      '–',
    ]),
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runServeBench();
