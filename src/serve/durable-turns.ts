/**
 * A served conversation's turns on Postgres, as DBOS workflows, so that a turn is answered once
 * whichever server its request reaches and whichever process dies while it runs.
 *
 * A turn's workflow id is `turn:<conversation>:<request>`, the request being the digest of the history
 * the client has seen and the message it adds (turn-request.ts): a retried request, here or on another
 * server, joins the workflow already started and gets its recorded reply. The workflow is one step,
 * which may run twice after a crash, so it first looks for the turn's recorded reply; else, under the
 * conversation's lock (one turn at a time across servers), it loads the stored state, runs the agent,
 * and in one transaction stores the state, the catalog entry and the reply. A reply stored by another
 * run of the turn wins, and is the one answered.
 *
 * A server starts a turn itself while it has room (`maxRunning` turns in flight here), else puts it on
 * the `turns` queue, partitioned by conversation, for a worker or a server with room. A turn that
 * failed (a model that could not be reached) is not the last word: a later request of the same turn
 * starts it again, as attempt 2, 3, … of the same id.
 *
 * Every process that takes turns lends the workflow what it serves (`serveTurns`): its hub, whose
 * agents are the graph files it was given. A process that serves no conversations (a goal run's) hands
 * a turn it is given to the queue.
 */
import { randomUUID } from 'node:crypto';
import { DBOS } from '@dbos-inc/dbos-sdk';
import type pg from 'pg';
import { isUserError } from '../errors.js';
import type { Database } from '../postgres/database.js';
import { DuplicateWrite } from '../store/in-memory.js';
import {
  createCatalogEntry,
  loadConversationState,
  putCatalogEntry,
  recordConversationState,
  storedTurn,
} from '../store/postgres.js';
import type { CatalogEntry } from '../store/catalog.js';
import { saidIn, type ConversationHub, type TurnResult, type TurnRunner } from './conversations.js';
import { ApiError, type ApiStatus } from './errors.js';
import { extendHistory, historyStart } from './history.js';
import {
  conversationOfRequest,
  inConversationTransaction,
  recordServedReply,
  servedReply,
  turnFooting,
} from './served-turns.js';
import type { ServedNotices } from './served-notices.js';

/** What a turn's workflow is given: all it needs is in the database but the message. */
export interface TurnInput {
  conversation: string;
  /** The request's digest (served-turns.ts). */
  request: string;
  /** The user's message; null for the agent's opening turn. */
  text: string | null;
  /** The request that started this attempt, so that it knows its own failure from an earlier one's. */
  nonce: string;
}

/** What a process that takes turns lends their workflows. */
export interface TurnHost {
  db: Database;
  /** Opens the agents, with this process's graph files. */
  hub: ConversationHub;
  /** The store key of conversation `id`. */
  keyOf(id: string): string;
  notices: ServedNotices;
  /** Who this process is, for messages: its executor id. */
  name: string;
  onProblem(message: string): void;
}

/** A turn that ended without a reply, as its step records it. */
interface TurnFailure {
  status: ApiStatus;
  code: string;
  message: string;
}

type StepOutcome =
  { kind: 'reply'; reply: TurnResult } | ({ kind: 'failed' } & TurnFailure) | { kind: 'elsewhere' };

/** A turn's failure as its workflow records it (DBOS keeps an error's own fields). */
class TurnFailed extends Error {
  constructor(
    message: string,
    readonly status: ApiStatus,
    readonly code: string,
    readonly nonce: string,
  ) {
    super(message);
    this.name = 'TurnFailed';
  }
}

/** Attempts of one turn a request may start, each after another request's failed one. */
const MAX_ATTEMPTS = 5;
/** A turn whose stored state another run overtook (its lock was lost with its connection) runs again. */
const MAX_RUNS = 3;

let host: TurnHost | undefined;
/** Where a turn running here streams its reply, by workflow id (its request waits here). */
const streams = new Map<string, (delta: string) => void>();
/** Turns this process started itself, not yet answered; with those it took from the queue, its load. */
const startedHere = new Set<string>();
let takenFromQueue = 0;

/** Lends the turns' workflows what this process serves; call before the durable runtime launches. */
export function serveTurns(lent: TurnHost): void {
  host = lent;
}

async function turnWorkflow(input: TurnInput): Promise<TurnResult> {
  const id = DBOS.workflowID!;
  const outcome = await DBOS.runStep(() => runTurn(input, id), { name: 'turn' });
  if (outcome.kind === 'reply') return outcome.reply;
  if (outcome.kind === 'failed')
    throw new TurnFailed(outcome.message, outcome.status, outcome.code, input.nonce);
  const queued = await DBOS.startWorkflow(turn, {
    workflowID: `${id}:queued`,
    queueName: 'turns',
    enqueueOptions: { queuePartitionKey: input.conversation },
  })(input);
  return queued.getResult();
}

const turn = DBOS.registerWorkflow(turnWorkflow, { name: 'serve.turn' });

/** The turn's step: the recorded reply, or the agent's, stored with the state and catalog entry. */
async function runTurn(input: TurnInput, workflowId: string): Promise<StepOutcome> {
  const lent = host;
  if (!lent) return { kind: 'elsewhere' };
  const { conversation, request } = input;
  const mine = startedHere.has(workflowId);
  if (!mine) takenFromQueue++;
  try {
    for (let run = 1; ; run++) {
      try {
        const { outcome, stored } = await inConversationTransaction(lent.db, conversation, (client) =>
          runLocked(lent, input, workflowId, client),
        );
        stored?.();
        if (outcome.kind === 'reply') lent.notices.served(conversation, request, outcome.reply);
        return outcome;
      } catch (error) {
        if (!(error instanceof DuplicateWrite)) throw error;
        // Another run stored its turn first: this request's (then it is the answer), or another's,
        // stored under the same turn while this one's lock was lost with its connection (then again).
        const won = await servedReply(lent.db.pool, conversation, request);
        if (won) return { kind: 'reply', reply: won };
        if (run === MAX_RUNS)
          throw new Error(`conversation ${conversation}: ${MAX_RUNS} runs of a turn were overtaken`, {
            cause: error,
          });
      }
    }
  } catch (error) {
    return { kind: 'failed', ...failureOf(error, lent) };
  } finally {
    if (!mine) takenFromQueue--;
  }
}

/**
 * The turn inside its conversation's transaction: what it starts from, the agent's reply, and the
 * writes; `stored` tells the conversation held here, once they are committed.
 */
async function runLocked(
  lent: TurnHost,
  input: TurnInput,
  workflowId: string,
  client: pg.PoolClient,
): Promise<{ outcome: StepOutcome; stored?: () => void }> {
  const { conversation, request } = input;
  const key = lent.keyOf(conversation);
  const footing = await turnFooting(client, conversation, request);
  if (footing.recorded) return { outcome: { kind: 'reply', reply: footing.recorded } };
  if (!footing.entry)
    return { outcome: failed(404, 'conversation_not_found', `no conversation ${conversation}`) };
  const entry = catalogEntryOf(footing.entry);
  const saved = await loadConversationState(client, key);
  if (saved?.ended)
    return {
      outcome: failed(
        409,
        'conversation_ended',
        `conversation ${conversation} has ended (a quit transition was taken)`,
      ),
    };
  const live = await lent.hub.at(entry, saved).catch((error: unknown) => {
    if (error instanceof ApiError && error.code === 'graph_not_served')
      throw new ApiError(
        409,
        `${lent.name} took a turn of conversation ${conversation}, whose graph "${entry.graph}" it was not given; give every worker the graph files the servers have`,
        'graph_not_served',
      );
    throw error;
  });
  const text = input.text ?? undefined;
  const { result, usage } = await live.reply(text, streams.get(workflowId));
  const reply: TurnResult = { reply: result.reply, ended: result.ended, node: result.state.current, usage };
  const next: CatalogEntry = {
    ...entry,
    updated: new Date().toISOString(),
    history: extendHistory(
      entry.history ?? historyStart(entry.owner, entry.graph),
      saidIn(text, result.reply),
    ),
  };
  try {
    await recordConversationState(client, key, result.state, saved);
    await putCatalogEntry(client, next);
    if (!(await recordServedReply(client, conversation, request, reply))) throw new DuplicateWrite(request);
  } catch (error) {
    // What the agent holds here was not stored: the next turn here opens the stored state again.
    live.forget();
    throw error;
  }
  return { outcome: { kind: 'reply', reply }, stored: () => live.stored(next) };
}

function failed(status: ApiStatus, code: string, message: string): StepOutcome {
  return { kind: 'failed', status, code, message };
}

/** A catalog row as read by turnFooting, as an entry. */
function catalogEntryOf(row: Record<string, string | null>): CatalogEntry {
  const { history, ...rest } = row;
  const entry = rest as unknown as CatalogEntry;
  return history === null || history === undefined ? entry : { ...entry, history };
}

/** What the client is told of a turn that failed; what only the operator should read goes to the log. */
function failureOf(error: unknown, lent: TurnHost): TurnFailure {
  if (error instanceof ApiError) return { status: error.status, code: error.code, message: error.message };
  if (isUserError(error)) return { status: 500, code: 'agent_failed', message: error.message };
  lent.onProblem(error instanceof Error ? (error.stack ?? error.message) : String(error));
  return {
    status: 500,
    code: 'internal_error',
    message: `the server failed while answering; the log of ${lent.name} says why`,
  };
}

/** A server's side: turns started here while there is room, queued past it, and their replies awaited. */
export class DurableTurns implements TurnRunner {
  readonly #db: Database;
  readonly #notices: ServedNotices;
  readonly #maxRunning: number;

  constructor(db: Database, notices: ServedNotices, maxRunning: number) {
    this.#db = db;
    this.#notices = notices;
    this.#maxRunning = maxRunning;
  }

  async turn(
    id: string,
    request: string,
    text: string | undefined,
    onDelta?: (delta: string) => void,
  ): Promise<TurnResult> {
    for (let attempt = 1; ; attempt++) {
      const workflowID = `turn:${id}:${request}${attempt === 1 ? '' : `:${attempt}`}`;
      const input: TurnInput = { conversation: id, request, text: text ?? null, nonce: randomUUID() };
      const here = startedHere.size + takenFromQueue < this.#maxRunning;
      if (here) startedHere.add(workflowID);
      if (onDelta) streams.set(workflowID, onDelta);
      const served = this.#notices.wait(id, request);
      try {
        const handle = await DBOS.startWorkflow(
          turn,
          here
            ? { workflowID }
            : { workflowID, queueName: 'turns', enqueueOptions: { queuePartitionKey: id } },
        )(input);
        const result = handle.getResult();
        // Answered by whichever comes first: the workflow's result, or the notice of the stored reply.
        result.catch(() => undefined);
        return await Promise.race([result, served.reply]);
      } catch (error) {
        const failed = error as Partial<TurnFailed>;
        // An earlier request's attempt failed: this request is the retry it needs.
        if (failed.nonce !== undefined && failed.nonce !== input.nonce && attempt < MAX_ATTEMPTS) continue;
        if (failed.status !== undefined && failed.code !== undefined)
          throw new ApiError(failed.status, failed.message ?? 'the turn failed', failed.code);
        throw error;
      } finally {
        served.cancel();
        streams.delete(workflowID);
        startedHere.delete(workflowID);
      }
    }
  }

  create(entry: CatalogEntry): Promise<boolean> {
    return createCatalogEntry(this.#db.pool, entry);
  }

  servedBy(request: string): Promise<string | undefined> {
    return conversationOfRequest(this.#db.pool, request);
  }

  storedTurn(key: string): Promise<number | undefined> {
    return storedTurn(this.#db.pool, key);
  }
}
