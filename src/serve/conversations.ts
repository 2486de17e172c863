/**
 * The conversations a server holds. Each is an agent opened with src/agent's opener on its own events
 * (so its stream carries its turns only), kept live while it is in use and closed after it has been
 * idle; its state is saved through the store after every reply, and its catalog entry names its graph
 * and its owner, so a later process (after a restart) opens it again where it stood.
 *
 * One turn runs at a time in a conversation: a second message waits for the first, or is refused when
 * its client would rather not wait, and a bounded number wait at most.
 *
 * On Postgres (a `TurnRunner`, durable-turns.ts) a turn is a workflow that may run in another process,
 * which saves the state itself; a conversation held here is then only a cache of the agent, checked
 * against the stored state before it is shown or used, since another server may have moved it on.
 */
import { randomBytes } from 'node:crypto';
import { agentOpener, type AgentWorld } from '../agent/open.js';
import { pythonRuntimeOf } from './python-runtimes.js';
import { Conversation } from '../engine/conversation.js';
import type { Interpreter, ReplyResult } from '../engine/interpreter.js';
import { conversationGraph } from '../engine/self-mode.js';
import { stateMismatch, type ConversationState } from '../engine/state.js';
import { EventBus, type TokenUsage } from '../events.js';
import { UsageMeter } from '../llm/usage.js';
import type { CatalogEntry } from '../store/catalog.js';
import type { Store } from '../store/store.js';
import { ApiError } from './errors.js';
import { EventLog } from './event-log.js';
import { extendHistory, historyStart, type Said } from './history.js';
import { ReplyStream } from './reply-stream.js';
import { requestAfter } from './turn-request.js';
import type { ServedAgent } from './served.js';

export interface HubSetup {
  store: Store;
  agents: ReadonlyMap<string, ServedAgent>;
  /** What every conversation's agent is lent beyond its models, events, store and folder. */
  world: Omit<AgentWorld, 'models' | 'events' | 'store' | 'folder'>;
  /** The store key of conversation `id`. */
  keyOf(id: string): string;
  /** Messages that may wait behind a conversation's turn in progress; more get 429. */
  maxWaiting: number;
  /** A conversation unused this long is closed (and opened again from the store when needed). */
  idleMs: number;
  /** On Postgres: how turns run, as durable workflows (absent: here, saved through the store). */
  durable?: TurnRunner;
}

/** How a server on Postgres runs turns (durable-turns.ts). */
export interface TurnRunner {
  /**
   * The reply of the turn named `request` (turn-request.ts) that adds `text` (undefined: the opening
   * turn) to conversation `id`: run here or elsewhere, or the one recorded when that turn was served.
   */
  turn(
    id: string,
    request: string,
    text: string | undefined,
    onDelta?: (delta: string) => void,
  ): Promise<TurnResult>;
  /** Records `entry` unless an entry has its id already (then false): two servers may make one at once. */
  create(entry: CatalogEntry): Promise<boolean>;
  /** The turn the stored state of the conversation under `key` stands at; undefined for none. */
  storedTurn(key: string): Promise<number | undefined>;
  /** The conversation that served the turn named `request`, if one did. */
  servedBy(request: string): Promise<string | undefined>;
}

export interface FindOptions {
  /**
   * On Postgres: the agent held here is checked against the stored state (default), as what a client
   * is shown must be; false when it is wanted for a turn only, whose workflow checks it anyway.
   */
  current?: boolean;
}

export interface TurnOptions {
  /** Wait for a turn in progress to finish (true), or refuse at once with 409. */
  wait: boolean;
  /**
   * On Postgres: what names the turn (turn-request.ts), so that a retried request gets the one recorded
   * reply; default: what the server recorded last, and the message.
   */
  request?: string;
  /** Told each piece of the reply as it streams. */
  onDelta?: (delta: string) => void;
}

export interface TurnResult {
  reply: string;
  /** A quit was taken: the conversation takes no more messages. */
  ended: boolean;
  /** The node the conversation stands at now. */
  node: string | undefined;
  usage: TokenUsage;
}

export class ConversationHub {
  readonly #setup: HubSetup;
  readonly #live = new Map<string, Promise<LiveConversation>>();

  constructor(setup: HubSetup) {
    this.#setup = setup;
  }

  /** Turns run as durable workflows (on Postgres), and a request may name its turn (turn-request.ts). */
  get durable(): boolean {
    return this.#setup.durable !== undefined;
  }

  /** `owner`'s conversation `id`, opened; undefined when there is none, or it is someone else's. */
  async find(owner: string, id: string, options: FindOptions = {}): Promise<LiveConversation | undefined> {
    const entry = await this.#setup.store.catalog.get(id);
    if (!entry || entry.owner !== owner) return undefined;
    const conversation = await this.#open(entry);
    const { durable, keyOf } = this.#setup;
    if (!durable) return conversation;
    conversation.stored(entry);
    if (options.current ?? true) await conversation.refresh(await durable.storedTurn(keyOf(id)));
    return conversation;
  }

  /**
   * Conversation `entry` standing at `saved` (its stored state), for a turn a workflow runs in this
   * process (durable-turns.ts); an ApiError when this process cannot hold it (its graph is not here).
   */
  async at(entry: CatalogEntry, saved: ConversationState | undefined): Promise<LiveConversation> {
    const conversation = await this.#open(entry, saved);
    await conversation.moveTo(entry, saved);
    return conversation;
  }

  /** A new conversation of `owner` with `graph`, under `id` (a fresh one when not given). */
  async create(owner: string, graph: string, id = newId()): Promise<LiveConversation> {
    if (await this.#setup.store.catalog.get(id))
      throw new ApiError(409, `a conversation ${id} exists already`, 'conversation_exists');
    const now = new Date().toISOString();
    const entry: CatalogEntry = { id, graph, owner, created: now, updated: now };
    const { durable, store } = this.#setup;
    if (!durable) await store.catalog.put(entry);
    else if (!(await durable.create(entry)))
      throw new ApiError(409, `a conversation ${id} exists already`, 'conversation_exists');
    return this.#open(entry);
  }

  /**
   * `owner`'s conversation whose client has seen the history of digest `history`; on Postgres also the
   * one that has served the turn named `request` already (its client is retrying it: the answer was lost).
   */
  async recognise(owner: string, history: string, request?: string): Promise<LiveConversation | undefined> {
    const { store, durable } = this.#setup;
    const id =
      (await store.catalog.byHistory(owner, history)) ??
      (request === undefined ? undefined : await durable?.servedBy(request));
    return id === undefined ? undefined : this.find(owner, id, { current: false });
  }

  list(owner: string): Promise<CatalogEntry[]> {
    return this.#setup.store.catalog.list(owner);
  }

  /** Waits for the turns in progress (at most `ms`), then closes every conversation. */
  async close(ms: number): Promise<void> {
    const live = (await Promise.allSettled(this.#live.values())).flatMap((open) =>
      open.status === 'fulfilled' ? [open.value] : [],
    );
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise((resolve) => (timer = setTimeout(resolve, ms)));
    await Promise.race([Promise.allSettled(live.map((conversation) => conversation.settled())), timeout]);
    clearTimeout(timer);
    for (const conversation of live) conversation.dispose();
    this.#live.clear();
  }

  #open(entry: CatalogEntry, saved?: ConversationState): Promise<LiveConversation> {
    let opening = this.#live.get(entry.id);
    if (!opening) {
      opening = this.#load(entry, saved);
      this.#live.set(entry.id, opening);
      opening.catch(() => this.#live.delete(entry.id));
    }
    return opening;
  }

  /** `entry` opened at `saved`, or at its stored state when `saved` is not given. */
  async #load(entry: CatalogEntry, saved?: ConversationState): Promise<LiveConversation> {
    const state = saved ?? (await this.#setup.store.conversations.load(this.#setup.keyOf(entry.id)));
    const events = new EventBus();
    const conversation = await this.#conversationAt(entry, state, events);
    return new LiveConversation(entry, conversation, events, this.#setup, {
      onIdle: () => this.#closeIdle(entry.id),
      reopen: (at) => this.#conversationAt(entry, at, events),
    });
  }

  /** The agent of `entry`'s graph on `events`, at `saved`. */
  async #conversationAt(
    entry: CatalogEntry,
    saved: ConversationState | undefined,
    events: EventBus,
  ): Promise<Conversation> {
    const { store, agents, world, keyOf, durable } = this.#setup;
    const agent = agents.get(entry.graph);
    if (!agent)
      throw new ApiError(
        409,
        `conversation ${entry.id} is with the graph "${entry.graph}", which this server no longer serves`,
        'graph_not_served',
      );
    const key = keyOf(entry.id);
    const graph = conversationGraph(agent.file, saved, { source: `conversation ${entry.id}` });
    const problem = saved && stateMismatch(saved, graph);
    if (problem !== undefined)
      throw new ApiError(
        409,
        `conversation ${entry.id} cannot go on: its state ${problem}`,
        'conversation_mismatch',
      );
    const models = new UsageMeter(events).meter(agent.models);
    const open = agentOpener({
      ...world,
      models,
      events,
      store,
      folder: agent.folder,
      python: pythonRuntimeOf(entry.owner),
    });
    const interpreter = await open({ graph });
    // On Postgres the turn's workflow saves the state, with the catalog entry and the reply.
    return new Conversation(interpreter, saved, durable ? undefined : { store: store.conversations, key });
  }

  #closeIdle(id: string): void {
    void this.#live.get(id)?.then((conversation) => {
      // Someone following its events keeps it open: a reopened conversation would have another log.
      if (conversation.pending > 0 || conversation.log.listened) return conversation.rearm();
      this.#live.delete(id);
      conversation.dispose();
    });
  }
}

/** What a conversation open in this process is lent by its hub. */
interface LiveLinks {
  /** Told when it has been idle for the hub's idle time. */
  onIdle(): void;
  /** The agent again, at `saved` (another process moved the conversation on). */
  reopen(saved: ConversationState | undefined): Promise<Conversation>;
}

/** A conversation open in this process. */
export class LiveConversation {
  readonly log = new EventLog();
  /** The conversation's events, across the agents it is reopened with. */
  readonly events: EventBus;
  readonly #setup: HubSetup;
  readonly #links: LiveLinks;
  #conversation: Conversation;
  #entry: CatalogEntry;
  #tail: Promise<unknown> = Promise.resolve();
  #pending = 0;
  #idle: NodeJS.Timeout | undefined;
  /** An agent's reply is under way here. */
  #replying = false;
  /** Its agent's state may not be the stored one (a turn here failed to be stored). */
  #stale = false;

  constructor(
    entry: CatalogEntry,
    conversation: Conversation,
    events: EventBus,
    setup: HubSetup,
    links: LiveLinks,
  ) {
    this.#entry = entry;
    this.#conversation = conversation;
    this.events = events;
    this.#setup = setup;
    this.#links = links;
    this.events.on((event) => this.log.append(event));
    this.#armIdle();
  }

  get id(): string {
    return this.#entry.id;
  }

  get entry(): CatalogEntry {
    return this.#entry;
  }

  get interpreter(): Interpreter {
    return this.#conversation.interpreter;
  }

  get state(): ConversationState | undefined {
    return this.#conversation.state;
  }

  /** True until the agent's opening turn has run. */
  get fresh(): boolean {
    return this.#conversation.fresh;
  }

  /** Turns running or waiting. */
  get pending(): number {
    return this.#pending;
  }

  /**
   * Gives the agent `text` (undefined: its opening turn) once the turns before it are done, and
   * records what the client has now seen in the catalog.
   */
  turn(text: string | undefined, options: TurnOptions): Promise<TurnResult> {
    // Said now when it can be, so that a streamed answer is refused before its stream begins. On
    // Postgres the turn's step says it, after looking for the turn's recorded reply: a client retrying
    // the turn that ended the conversation gets that turn's reply.
    if (this.#pending === 0 && !this.#setup.durable) this.#refuseIfEnded();
    if (this.#pending > 0 && !options.wait)
      throw new ApiError(
        409,
        `conversation ${this.id} is still answering an earlier message; send this one when it is done, or let the request wait`,
        'conversation_busy',
      );
    if (this.#pending > this.#setup.maxWaiting)
      throw new ApiError(
        429,
        `conversation ${this.id} has ${this.#pending} messages waiting already`,
        'too_many_waiting',
        undefined,
        { 'Retry-After': '1' },
      );
    this.#pending++;
    clearTimeout(this.#idle);
    const run = this.#tail.then(() => this.#run(text, options));
    this.#tail = run
      .catch(() => undefined)
      .finally(() => {
        if (--this.#pending === 0) this.#armIdle();
      });
    return run;
  }

  /**
   * Runs the agent on `text` here, streaming its reply to `onDelta`: the whole turn in files mode, the
   * agent's part of a durable turn on Postgres (whose workflow stores the state it leaves).
   */
  async reply(
    text: string | undefined,
    onDelta?: (delta: string) => void,
  ): Promise<{ result: ReplyResult; usage: TokenUsage }> {
    this.#refuseIfEnded();
    const usage: TokenUsage = { promptTokens: 0, completionTokens: 0 };
    const stream = onDelta && new ReplyStream(this.interpreter.graph, onDelta);
    const stop = this.events.on((event) => {
      stream?.see(event);
      if (event.type !== 'model.call') return;
      usage.promptTokens += event.usage.promptTokens;
      usage.completionTokens += event.usage.completionTokens;
    });
    this.#replying = true;
    try {
      const result = await this.#conversation.reply(text);
      stream?.finish(result.reply);
      return { result, usage };
    } catch (error) {
      this.#stale = true;
      throw error;
    } finally {
      this.#replying = false;
      stop();
    }
  }

  /**
   * On Postgres: unless a reply is under way here, opens the agent again when the stored state stands
   * at `storedTurn`, another turn than this one's.
   */
  async refresh(storedTurn: number | undefined): Promise<void> {
    if (this.#replying || (!this.#stale && storedTurn === this.state?.steps)) return;
    const saved = await this.#setup.store.conversations.load(this.#setup.keyOf(this.id));
    const conversation = await this.#links.reopen(saved);
    // A turn that began here meanwhile stands on the stored state already, and owns the agent.
    if (this.#replying) conversation.interpreter.dispose();
    else this.#swap(conversation);
  }

  /** On Postgres: stands at `saved`, the stored state a turn's workflow goes on from, with `entry`. */
  async moveTo(entry: CatalogEntry, saved: ConversationState | undefined): Promise<void> {
    this.#entry = entry;
    if (this.#stale || saved?.steps !== this.state?.steps) this.#swap(await this.#links.reopen(saved));
  }

  /** On Postgres: `entry` is the conversation's catalog entry as stored now (by a turn, or read). */
  stored(entry: CatalogEntry): void {
    this.#entry = entry;
  }

  /** On Postgres: what the last reply left was not stored; the next use opens the stored state again. */
  forget(): void {
    this.#stale = true;
  }

  /** Looks again after another idle spell. */
  rearm(): void {
    this.#armIdle();
  }

  /** Settles once no turn is running or waiting. */
  async settled(): Promise<void> {
    while (this.#pending > 0) await this.#tail;
  }

  dispose(): void {
    clearTimeout(this.#idle);
    this.interpreter.dispose();
  }

  #swap(conversation: Conversation): void {
    this.interpreter.dispose();
    this.#conversation = conversation;
    this.#stale = false;
  }

  async #run(text: string | undefined, options: TurnOptions): Promise<TurnResult> {
    const { durable } = this.#setup;
    const { owner, graph, history } = this.#entry;
    if (durable) {
      const sent = options.onDelta && new SentText(options.onDelta);
      const request = options.request ?? requestAfter(history ?? historyStart(owner, graph), text);
      const result = await durable.turn(this.id, request, text, sent?.send);
      // A turn run elsewhere streamed nothing here: its reply goes as one piece.
      sent?.finish(result.reply);
      return result;
    }
    const { result, usage } = await this.reply(text, options.onDelta);
    const said = saidIn(text, result.reply);
    this.#entry = {
      ...this.#entry,
      updated: new Date().toISOString(),
      history: extendHistory(history ?? historyStart(owner, graph), said),
    };
    await this.#setup.store.catalog.put(this.#entry);
    return { reply: result.reply, ended: result.ended, node: result.state.current, usage };
  }

  #refuseIfEnded(): void {
    if (this.state?.ended)
      throw new ApiError(
        409,
        `conversation ${this.id} has ended (a quit transition was taken)`,
        'conversation_ended',
      );
  }

  #armIdle(): void {
    clearTimeout(this.#idle);
    this.#idle = setTimeout(this.#links.onIdle, this.#setup.idleMs);
    this.#idle.unref();
  }
}

/** What a turn added to what the client has seen: its message (none for the opening) and the reply. */
export function saidIn(text: string | undefined, reply: string): Said[] {
  return [
    ...(text ? [{ role: 'user' as const, content: text }] : []),
    ...(reply ? [{ role: 'assistant' as const, content: reply }] : []),
  ];
}

/** Pieces of a reply as sent to a client, so that what was not sent can follow. */
class SentText {
  #sent = '';

  constructor(private readonly emit: (delta: string) => void) {}

  readonly send = (delta: string): void => {
    this.#sent += delta;
    this.emit(delta);
  };

  /** Sends what `reply` has beyond what was sent, when what was sent is its start. */
  finish(reply: string): void {
    if (reply.startsWith(this.#sent) && reply.length > this.#sent.length)
      this.send(reply.slice(this.#sent.length));
  }
}

/** A conversation id no one can guess. */
function newId(): string {
  return `conv_${randomBytes(12).toString('base64url')}`;
}
