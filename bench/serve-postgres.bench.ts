/**
 * Serve on PostgreSQL benchmark: `meta-agent serve --database` as a user starts it, on the serve
 * benchmark's graph and zero-latency model (serve.bench.ts, serve-processes.ts), on a PostgreSQL with
 * durable commits (postgres-server.ts: its own embedded server, or META_AGENT_BENCH_POSTGRES). Two figures:
 *
 * - **per-turn overhead of Postgres over the files**: a server on the files and one on a database, one
 *   conversation each, a turn of each a round, the first side alternating; each server's own time per
 *   turn from its log. A turn on Postgres is a DBOS workflow whose step takes the conversation's lock,
 *   loads its state, runs the agent and stores state, catalog entry and reply in one transaction. The
 *   overhead is the median of each round's difference. Goal: < 30 ms;
 * - **turns per second on Postgres**: 10 and 100 conversations at once on one server that runs them all
 *   itself (--max-running 100), and 100 on two servers with the default --max-running 32 and a worker
 *   sharing the database, the conversations spread over both servers, so that past 32 a server's turns
 *   go through the `turns` queue to whichever process takes them; every level in every round, after a
 *   round that is not counted. Goal: ≥ 100 turns/s at 100.
 *
 * Run: `npx tsc -p . && node --no-node-snapshot bench/run.js serve-postgres`
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startPostgres } from './postgres-server.js';
import { Client, GRAPH, spread, userText } from './serve.bench.js';
import { startModel, startServe, startWorker, type ServeProcess } from './serve-processes.js';
import { percentile, printTable, verdict } from './stats.js';

export const GOALS = { overheadMs: 30, turnsPerSecond: 100, atConversations: 100 };

/** Counted turns of each side of the comparison, after WARM_TURNS that are not. */
const COMPARE_TURNS = 200;
const WARM_TURNS = 50;
/** Counted rounds of every level, after one that is not (it also starts the conversations). */
const ROUNDS = 3;

interface Topology {
  name: string;
  servers: number;
  /** Each server's --max-running. */
  maxRunning: number;
  workers: number;
  levels: { conversations: number; turns: number }[];
}

const TOPOLOGIES: Topology[] = [
  {
    name: '1 server, --max-running 100',
    servers: 1,
    maxRunning: 100,
    workers: 0,
    levels: [
      { conversations: 10, turns: 30 },
      { conversations: 100, turns: 10 },
    ],
  },
  {
    name: '2 servers (default --max-running 32) + 1 worker',
    servers: 2,
    maxRunning: 32,
    workers: 1,
    levels: [{ conversations: 100, turns: 10 }],
  },
];

export interface PostgresThroughputRow {
  topology: string;
  conversations: number;
  turnsPerRound: number;
  /** Median over the rounds. */
  turnsPerSecond: number;
  roundTripMs: { p50: number; p99: number };
  /** The servers' own time per turn, from their logs. */
  serverMs: { p50: number; p99: number };
}

export interface ServePostgresBenchResult {
  loadBefore: number;
  overhead: {
    files: { p50: number; p99: number };
    postgres: { p50: number; p99: number };
    medianMs: number;
  };
  throughput: PostgresThroughputRow[];
}

export async function runServePostgresBench(): Promise<ServePostgresBenchResult> {
  const loadBefore = loadavg()[0]!;
  const dir = await mkdtemp(join(tmpdir(), 'meta-agent-serve-pg-bench-'));
  const graph = join(dir, 'helpdesk.autogram.json');
  await writeFile(graph, JSON.stringify(GRAPH));
  const postgres = await startPostgres();
  const model = await startModel();
  try {
    const overhead = await compareWithFiles(graph, model.url, dir, await postgres.database());
    const throughput: PostgresThroughputRow[] = [];
    for (const topology of TOPOLOGIES)
      throughput.push(
        ...(await measureThroughput(topology, graph, model.url, dir, await postgres.database())),
      );
    const result = { loadBefore, overhead, throughput };
    print(result);
    return result;
  } finally {
    model.stop();
    await postgres.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** A server on the files and one on `database`, a turn of each a round, the first side alternating. */
async function compareWithFiles(
  graph: string,
  modelUrl: string,
  dir: string,
  database: string,
): Promise<ServePostgresBenchResult['overhead']> {
  const [files, postgres] = await Promise.all([
    startServe(graph, modelUrl, join(dir, 'files')),
    startServe(graph, modelUrl, join(dir, 'postgres'), { database }),
  ]);
  try {
    const sides = [files, postgres].map((server) => ({
      server,
      client: new Client(server.url),
      ms: [] as number[],
    }));
    const turn = async ({ server, client }: (typeof sides)[number], text: string) => {
      await client.turn('solo', text);
      await server.logged(client.sent);
      return server.turns[client.sent - 1]!.ms;
    };
    for (let round = 0; round < WARM_TURNS + COMPARE_TURNS; round++) {
      const text = userText(round);
      const order = round % 2 === 0 ? sides : [...sides].reverse();
      const ms = [];
      for (const side of order) ms.push({ side, ms: await turn(side, text) });
      if (round >= WARM_TURNS) for (const { side, ms: taken } of ms) side.ms.push(taken);
    }
    const [onFiles, onPostgres] = sides.map((side) => side.ms);
    return {
      files: spread(onFiles!),
      postgres: spread(onPostgres!),
      medianMs: percentile(
        onPostgres!.map((ms, i) => ms - onFiles![i]!),
        0.5,
      ),
    };
  } finally {
    await Promise.all([files.stop(), postgres.stop()]);
  }
}

/** `topology`'s processes on `database`, and its levels, each in every round. */
async function measureThroughput(
  topology: Topology,
  graph: string,
  modelUrl: string,
  dir: string,
  database: string,
): Promise<PostgresThroughputRow[]> {
  const servers: ServeProcess[] = [];
  for (let i = 0; i < topology.servers; i++)
    servers.push(
      await startServe(graph, modelUrl, join(dir, `tp-${i}`), {
        database,
        args: ['--max-running', String(topology.maxRunning)],
      }),
    );
  const workers = await Promise.all(
    Array.from({ length: topology.workers }, () => startWorker(graph, modelUrl, database, dir)),
  );
  const clients = servers.map((server) => new Client(server.url));
  try {
    const samples = topology.levels.map((level) => ({
      level,
      rates: [] as number[],
      roundTripMs: [] as number[],
      serverMs: [] as number[],
    }));
    for (let round = -1; round < ROUNDS; round++) {
      for (const sample of samples) {
        const { conversations, turns } = sample.level;
        const logged = servers.map((server) => server.turns.length);
        const started = performance.now();
        const trips = await Promise.all(
          Array.from({ length: conversations }, (_, i) =>
            clients[i % clients.length]!.turns(`c${conversations}-${i}`, turns, (round + 1) * turns),
          ),
        );
        const seconds = (performance.now() - started) / 1000;
        await Promise.all(servers.map((server, i) => server.logged(clients[i]!.sent)));
        if (round < 0) continue;
        sample.rates.push((conversations * turns) / seconds);
        sample.roundTripMs.push(...trips.flat());
        for (const [i, server] of servers.entries())
          sample.serverMs.push(...server.turns.slice(logged[i]).map((record) => record.ms));
      }
    }
    return samples.map(({ level, rates, roundTripMs, serverMs }) => ({
      topology: topology.name,
      conversations: level.conversations,
      turnsPerRound: level.conversations * level.turns,
      turnsPerSecond: percentile(rates, 0.5),
      roundTripMs: spread(roundTripMs),
      serverMs: spread(serverMs),
    }));
  } finally {
    await Promise.all([...servers.map((server) => server.stop()), ...workers.map((worker) => worker.stop())]);
  }
}

function print({ loadBefore, overhead, throughput }: ServePostgresBenchResult): void {
  const ms = (value: number) => value.toFixed(1);
  const machine = `Node ${process.version}, ${cpus().length} cores, load average ${loadBefore.toFixed(1)} before`;
  printTable(
    `serve on PostgreSQL: one turn's server time on Postgres beside the files (the servers' logs), one of each a round, ${COMPARE_TURNS} rounds, ${machine}`,
    ['store', 'ms p50', 'p99', 'overhead ms p50', 'goal', ''],
    [
      ['files', ms(overhead.files.p50), ms(overhead.files.p99), '–', '', ''],
      [
        'postgres',
        ms(overhead.postgres.p50),
        ms(overhead.postgres.p99),
        ms(overhead.medianMs),
        `< ${GOALS.overheadMs} ms`,
        verdict(overhead.medianMs < GOALS.overheadMs),
      ],
    ],
  );
  console.log('');
  printTable(
    `serve on PostgreSQL: turns per second, zero-latency model, ${ROUNDS} rounds of every level interleaved, fetch with keep-alive`,
    [
      'processes',
      'conversations',
      'turns/round',
      'turns/s',
      'round trip ms p50',
      'p99',
      'server ms p50',
      'p99',
      'goal',
      '',
    ],
    throughput.map((row) => {
      const goal = row.conversations === GOALS.atConversations;
      return [
        row.topology,
        String(row.conversations),
        String(row.turnsPerRound),
        row.turnsPerSecond.toFixed(0),
        ms(row.roundTripMs.p50),
        ms(row.roundTripMs.p99),
        ms(row.serverMs.p50),
        ms(row.serverMs.p99),
        goal ? `≥ ${GOALS.turnsPerSecond} turns/s` : '',
        goal ? verdict(row.turnsPerSecond >= GOALS.turnsPerSecond) : '',
      ];
    }),
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runServePostgresBench();
