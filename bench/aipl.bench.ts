/**
 * AIPL benchmark: the model calls one turn's render of an AIPL template makes (`renderWithModel`, the
 * model-update phase and the render), and the time they take, through the real OpenAI client against a
 * loopback OpenAI server that takes 250 ms to answer each call. Each template runs with the phase's calls
 * asked at once (concurrency 8, the default) and one after another (concurrency 1), with 1 and 3 votes
 * per soft function. A second render of the same template in the same turn shows the turn's cache: it
 * makes no call.
 *
 * The phase asks, all at once, everything a walk of the template waits for, and walks again with the
 * answers: a wave. What lies inside a block whose condition waits on the model is asked in a later wave,
 * so the waves are the template's depth of model decisions, not its number of calls. A structure pass
 * per case, with no limit on calls in flight, counts them from the server's side: calls that arrive
 * together are one wave. The least time a pass can take at concurrency c is then one latency per
 * ⌈calls of a wave / c⌉, summed over the waves: the round trips the goal is set from.
 *
 * The server answers deterministically, as a fixture: `A` (true) to every yes/no classifier question, a
 * number from a fixed table to every coercion, and a short text made from the question to every update
 * question; any other prompt fails the bench. Every pass, in both modes, must give the first pass's
 * rendered text and stored values, or the bench fails.
 *
 * Run: `npx tsc -p . && NODE_ENV=production node --no-node-snapshot bench/run.js aipl`
 */
import { createHash } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import type { Template } from '../src/aipl/ast.js';
import { parseTemplate } from '../src/aipl/parse.js';
import { AiplCache, DEFAULT_AIPL_SETTINGS, renderWithModel, type PhaseResult } from '../src/aipl/phase.js';
import { clockSpecials } from '../src/aipl/render.js';
import type { AiplEntry, AiplState } from '../src/aipl/state.js';
import { modelsFromOptions } from '../src/cli/model-options.js';
import { EventBus } from '../src/events.js';
import type { ChatMessage, ModelSet } from '../src/llm/types.js';
import { UsageMeter } from '../src/llm/usage.js';
import { startOpenAIServer, type ChatRequestBody, type OpenAIServer } from '../test/support/openai-server.js';
import { printTable, quantiles, verdict } from './stats.js';

/** Latency the server adds to every call: one round trip. */
export const LATENCY_MS = 250;
/** Calls in flight in the concurrent mode: the phase's default. */
const CONCURRENCY = DEFAULT_AIPL_SETTINGS.concurrency;
/** Calls in flight in the structure pass that counts the waves: more than any wave has. */
const UNBOUNDED = 1_000;
/** Measured passes of each case in each mode, after one warm-up pass of each case. */
const REPEATS = 5;
/** What a pass may take beyond its round trips, in latencies. */
const SLACK_LATENCIES = 0.5;
const VOTES = [1, 3] as const;

/** The state as the turn finds it: answers stored in turn 0 that the templates' coercions read. */
const EARLIER_LOG: readonly AiplEntry[] = [
  { name: 'userinfo.children', value: 'two kids', turn: 0, question: 'How many children does Sam have?' },
  { name: 'budget.amount', value: 'about two thousand euros', turn: 0, question: "What is Sam's budget?" },
  {
    name: 'conversation.summary',
    value: 'Sam wants a quote for a family trip and is short of time',
    turn: 0,
    question: 'Summarize the conversation.',
  },
];
const TURN = 1;
const CONVERSATION: readonly ChatMessage[] = [
  { role: 'assistant', content: 'Hello! I am Ava from the travel desk. How can I help?' },
  { role: 'user', content: 'Hi, I am Dana from Lyon. I need a family trip to Lisbon in May, fast please.' },
];
const NAMES = { char: 'Ava', user: 'Sam', assistant: 'Ava' };
const CLOCK = clockSpecials(new Date('2025-03-14T19:30:00Z'), 'UTC');

/** The numbers the server states for the coercions' texts. */
const COERCIONS: Readonly<Record<string, string>> = { 'two kids': '2', 'about two thousand euros': '2000' };

/** 4 update questions, 2 blocks decided by a soft function, 1 decided by a coercion: one wave. */
const SMALL = `You are {char}, a travel agent talking with {user}.
(= "What is {user}'s name?" -> user.name)
(= "Where does {user} live?" -> user.city)
(= "Where does {user} want to travel?" -> trip.destination)
(= "When does {user} want to travel?" -> trip.month)
((isEvening("The current time is {time}")
It is evening: keep your answers short.
)
((isRushed({conversation.summary})
{user} is in a hurry: get to the point.
)
((userInfo.children > 0)
{user} travels with children: suggest family rooms.
)
Known so far: {user.name:no name} from {user.city:somewhere}, to {trip.destination:somewhere} in {trip.month:some month}.
`;

/**
 * About 2.5 times the small one: 8 update questions, 4 soft blocks and 2 coercions in the first wave, and
 * a block decided by a soft function holding 2 updates and a nested soft block: the second wave.
 */
const LARGE = `You are {char}, a travel agent talking with {user}.
(= "What is {user}'s name?" -> user.name)
(= "Where does {user} live?" -> user.city)
(= "Where does {user} want to travel?" -> trip.destination)
(= "When does {user} want to travel?" -> trip.month)
(= "How many people travel with {user}?" -> trip.party)
(= "How does {user} want to travel there?" -> trip.transport)
(= "What kind of hotel does {user} like?" -> trip.hotel)
(= "What does {user} want to do there?" -> trip.activities)
((isEvening("The current time is {time}")
It is evening: keep your answers short.
)
((isRushed({conversation.summary})
{user} is in a hurry: get to the point.
)
((isFormal("{user} wrote: hi, I am Dana")
Keep a formal tone.
)
((wantsDetails({conversation.summary})
Give prices item by item.
)
((userInfo.children > 0)
{user} travels with children: suggest family rooms.
)
((budget.amount >= 1000)
The budget allows four-star hotels.
)
((isPeakSeason("May in Lisbon")
Book early: this is peak season.
  (= "Which dates can {user} not travel on?" -> trip.blackout)
  (= "Does {user} need travel insurance?" -> trip.insurance)
  ((isFlexible({conversation.summary})
  Offer cheaper dates nearby.
  )
)
Known so far: {user.name:no name} from {user.city:somewhere}, {trip.party:a party} to {trip.destination:somewhere} in {trip.month:some month}, by {trip.transport:any means}; hotel {trip.hotel:any}; {trip.activities:no plans}; not on {trip.blackout:no date}; insurance {trip.insurance:not asked}.
`;

const TEMPLATES = [
  { name: 'S', label: 'S: 4 updates, 2 soft blocks, 1 coercion', source: SMALL },
  { name: 'L', label: 'L: 10 updates, 6 soft blocks (1 nested), 2 coercions', source: LARGE },
] as const;

const MODES = [
  { mode: 'concurrent', concurrency: CONCURRENCY },
  { mode: 'sequential', concurrency: 1 },
] as const;
type Mode = (typeof MODES)[number]['mode'];

/** One template with one number of votes, measured in both modes. */
export interface AiplBenchRow {
  template: string;
  votes: number;
  /** Model calls of one render (the same in every pass and both modes). */
  calls: number;
  /** Sequential rounds of the phase: groups of calls asked together, counted with no limit in flight. */
  waves: number;
  /** Calls in each wave. */
  callsPerWave: number[];
  /** The least latencies a render takes at concurrency 8: ⌈calls of a wave / 8⌉ summed over the waves. */
  roundTrips: number;
  /** The most calls the server had in flight at once in the concurrent passes. */
  mostInFlight: number;
  concurrentMs: { median: number; p95: number };
  sequentialMs: { median: number; p95: number };
  /** The concurrent median in latencies. */
  concurrentLatencies: number;
  /** The goal: the concurrent median at most `roundTrips + 0.5` latencies. */
  goalMs: number;
  met: boolean;
  /** Sequential median over concurrent median. */
  speedUp: number;
  /** A second render of the template in the same turn, with the same cache. */
  second: { calls: number; cached: number; ms: { median: number; p95: number } };
}

interface Sample {
  ms: number;
  calls: number;
  inFlight: number;
  /** The rendered text and the stored values, as JSON: what both modes must agree on. */
  outcome: string;
  second: { ms: number; calls: number; cached: number };
}

interface Case {
  key: string;
  template: Template;
  label: string;
  votes: 1 | 3;
}

/** Runs the benchmark, prints a table and returns its rows. */
export async function runAiplBench(): Promise<AiplBenchRow[]> {
  const fixture = new Fixture();
  const server = await startOpenAIServer({ latencyMs: LATENCY_MS, reply: (body) => fixture.answer(body) });
  try {
    // The models as `meta-agent` builds them for `--base-url URL --model gpt-4o-mini`, metered as
    // `chat` meters them.
    const { models: resolved } = await modelsFromOptions({ baseUrl: server.url, model: 'gpt-4o-mini' });
    const models = new UsageMeter(new EventBus()).meter(resolved);
    const cases: Case[] = TEMPLATES.flatMap((t) =>
      VOTES.map((votes) => ({
        key: `${t.name}/${votes}`,
        template: parseTemplate(t.source, `${t.name}.aipl`),
        label: t.label,
        votes,
      })),
    );
    // A first pass of each case loads the SDK and the server's tokenizer and opens the connections; its
    // outcome is the one every later pass must give.
    const reference = new Map<string, string>();
    for (const c of cases)
      reference.set(c.key, (await pass(c, CONCURRENCY, models, server, fixture)).outcome);
    const waves = new Map<string, number[]>();
    for (const c of cases) waves.set(c.key, await countWaves(c, models, server, fixture, reference));

    const samples = new Map(cases.flatMap((c) => MODES.map(({ mode }) => [key(c, mode), [] as Sample[]])));
    for (let repeat = 0; repeat < REPEATS; repeat++)
      for (const c of cases)
        // The modes take turns, and which goes first alternates, so a slow moment hits both alike.
        for (const { mode, concurrency } of repeat % 2 === 0 ? MODES : [...MODES].reverse()) {
          const sample = await pass(c, concurrency, models, server, fixture);
          same(reference.get(c.key)!, sample.outcome, `${c.key}, ${mode} pass ${repeat + 1}`);
          samples.get(key(c, mode))!.push(sample);
        }
    const rows = cases.map((c) => rowOf(c, waves.get(c.key)!, samples));
    printRows(rows);
    return rows;
  } finally {
    await server.close();
  }
}

function key(c: Case, mode: Mode): string {
  return `${c.key}/${mode}`;
}

/** The server's answers, and when each call arrived; a prompt it does not expect fails the bench. */
class Fixture {
  arrivals: number[] = [];
  unexpected: string[] = [];

  answer(body: ChatRequestBody): string {
    this.arrivals.push(performance.now());
    const prompt = body.messages.at(-1)?.content ?? '';
    // The yes/no classifier (soft functions read as truth): letters A (true) and B (false).
    if (prompt.endsWith('Answer with the letter only.')) return 'A';
    const coerced = /^What number does this text state\? "(.*)"\n/.exec(prompt)?.[1];
    if (coerced !== undefined && Object.hasOwn(COERCIONS, coerced)) return COERCIONS[coerced]!;
    const question = /^Answer this question about the conversation above: (.*)\n/.exec(prompt)?.[1];
    if (question !== undefined) {
      const digest = createHash('sha256').update(question).digest('hex').slice(0, 6);
      return `fixture ${digest}`;
    }
    this.unexpected.push(prompt);
    return 'unexpected';
  }

  /** Throws when a prompt came that the fixture does not answer. */
  check(what: string): void {
    if (this.unexpected.length === 0) return;
    const first = this.unexpected[0]!;
    this.unexpected = [];
    throw new Error(`${what}: the server was asked what it has no fixture for: ${JSON.stringify(first)}`);
  }
}

/** A render of a new turn, then a second render of the same template in that turn. */
async function pass(
  c: Case,
  concurrency: number,
  models: ModelSet,
  server: OpenAIServer,
  fixture: Fixture,
): Promise<Sample> {
  const state: AiplState = { turn: TURN, log: [...EARLIER_LOG] };
  const cache = new AiplCache();
  const render = () =>
    renderWithModel({
      template: c.template,
      state,
      vars: {},
      names: NAMES,
      clock: CLOCK,
      conversation: CONVERSATION,
      models,
      settings: { ...DEFAULT_AIPL_SETTINGS, votes: c.votes, concurrency },
      cache,
      label: 'bench',
    });
  const first = server.requests.length;
  const started = performance.now();
  const result = await render();
  const ms = performance.now() - started;
  fixture.check(c.key);
  const requests = server.requests.slice(first).filter((r) => r.path === '/v1/chat/completions');
  if (requests.length !== result.calls)
    throw new Error(`${c.key}: the phase counted ${result.calls} calls, the server had ${requests.length}`);

  const secondStarted = performance.now();
  const again = await render();
  const secondMs = performance.now() - secondStarted;
  const secondRequests = server.requests.length - first - requests.length;
  if (again.calls !== 0 || secondRequests !== 0)
    throw new Error(
      `${c.key}: a second render in the same turn made ${again.calls} calls (${secondRequests} at the server), not 0`,
    );
  if (again.text !== result.text || again.stored.length !== 0)
    throw new Error(
      `${c.key}: a second render in the same turn gave another text or stored again: ${outcomeOf(again)}`,
    );
  return {
    ms,
    calls: result.calls,
    inFlight: Math.max(...requests.map((r) => r.inFlight)),
    outcome: outcomeOf(result),
    second: { ms: secondMs, calls: again.calls, cached: again.cached },
  };
}

function outcomeOf(result: PhaseResult): string {
  return JSON.stringify({ text: result.text, stored: result.stored });
}

/**
 * One pass with no limit on calls in flight: every wave's calls go out together and arrive within a few
 * milliseconds, the next wave a whole latency later. Returns the calls of each wave.
 */
async function countWaves(
  c: Case,
  models: ModelSet,
  server: OpenAIServer,
  fixture: Fixture,
  reference: Map<string, string>,
): Promise<number[]> {
  fixture.arrivals = [];
  const sample = await pass(c, UNBOUNDED, models, server, fixture);
  same(reference.get(c.key)!, sample.outcome, `${c.key}, structure pass`);
  const waves: number[] = [];
  let last = -Infinity;
  for (const at of fixture.arrivals) {
    if (at - last > LATENCY_MS / 2) waves.push(0);
    waves[waves.length - 1]! += 1;
    last = at;
  }
  return waves;
}

/** Fails the bench when a pass's text or stored values differ from the first pass's. */
function same(expected: string, actual: string, what: string): void {
  if (actual === expected) return;
  throw new Error(`${what}: its rendered text or stored values differ from the first pass's:
first: ${expected}
this:  ${actual}`);
}

function rowOf(c: Case, callsPerWave: number[], samples: Map<string, Sample[]>): AiplBenchRow {
  const concurrent = samples.get(key(c, 'concurrent'))!;
  const sequential = samples.get(key(c, 'sequential'))!;
  const concurrentMs = quantiles(concurrent.map((s) => s.ms));
  const sequentialMs = quantiles(sequential.map((s) => s.ms));
  const roundTrips = callsPerWave.reduce((sum, calls) => sum + Math.ceil(calls / CONCURRENCY), 0);
  const goalMs = (roundTrips + SLACK_LATENCIES) * LATENCY_MS;
  const seconds = [...concurrent, ...sequential].map((s) => s.second);
  return {
    template: c.label,
    votes: c.votes,
    calls: concurrent[0]!.calls,
    waves: callsPerWave.length,
    callsPerWave,
    roundTrips,
    mostInFlight: Math.max(...concurrent.map((s) => s.inFlight)),
    concurrentMs,
    sequentialMs,
    concurrentLatencies: concurrentMs.median / LATENCY_MS,
    goalMs,
    met: concurrentMs.median <= goalMs,
    speedUp: sequentialMs.median / concurrentMs.median,
    second: {
      calls: Math.max(...seconds.map((s) => s.calls)),
      cached: seconds[0]!.cached,
      ms: quantiles(seconds.map((s) => s.ms)),
    },
  };
}

function printRows(rows: readonly AiplBenchRow[]): void {
  const header = [
    'template',
    'votes',
    'calls',
    'waves (calls)',
    `round trips at ${CONCURRENCY}`,
    'in flight',
    `c=${CONCURRENCY} ms`,
    'p95',
    'c=1 ms',
    'p95',
    'speed-up',
    `goal: c=${CONCURRENCY} ≤ (round trips + ${SLACK_LATENCIES}) × ${LATENCY_MS} ms`,
    'verdict',
  ];
  const measured = rows.map((r) => [
    r.template,
    String(r.votes),
    String(r.calls),
    `${r.waves} (${r.callsPerWave.join(' + ')})`,
    String(r.roundTrips),
    String(r.mostInFlight),
    r.concurrentMs.median.toFixed(0),
    r.concurrentMs.p95.toFixed(0),
    r.sequentialMs.median.toFixed(0),
    r.sequentialMs.p95.toFixed(0),
    `${r.speedUp.toFixed(1)}×`,
    `≤ ${r.goalMs.toFixed(0)} ms (${r.concurrentLatencies.toFixed(2)} latencies)`,
    verdict(r.met),
  ]);
  // The second render of the largest case, in the same turn: every answer comes from the turn's cache.
  const last = rows.at(-1)!;
  const second = [
    `${last.template.split(':')[0]}, second render in the same turn`,
    String(last.votes),
    `${last.second.calls} (${last.second.cached} cached)`,
    '0',
    '0',
    '0',
    last.second.ms.median.toFixed(2),
    last.second.ms.p95.toFixed(2),
    '',
    '',
    '',
    '0 calls',
    verdict(rows.every((r) => r.second.calls === 0)),
  ];
  printTable(
    `aipl benchmark: one turn's render through the OpenAI client, loopback server, ${LATENCY_MS} ms a call; medians of ${REPEATS} passes a mode, modes interleaved; text and stored values identical in both modes and every pass`,
    header,
    [...measured, second],
    1,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runAiplBench();
