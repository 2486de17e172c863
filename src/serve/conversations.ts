/**
 * The conversations a server holds. Each is an agent opened with src/agent's opener on its own events
 * (so its stream carries its turns only), kept live while it is in use and closed after it has been
 * idle; its state is saved through the store after every reply, and its catalog entry names its graph
 * and its owner, so a later process (after a restart) opens it again where it stood.
 *
 * One turn runs at a time in a conversation: a second message waits for the first, or is refused when
 * its client would rather not wait, and a bounded number wait at most.
 */
import { randomBytes } from 'node:crypto';
import { agentOpener, type AgentWorld } from '../agent/open.js';
import { Conversation } from '../engine/conversation.js';
import type { Interpreter } from '../engine/interpreter.js';
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
}

export interface TurnOptions {
  /** Wait for a turn in progress to finish (true), or refuse at once with 409. */
  wait: boolean;
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

  /** `owner`'s conversation `id`, opened; undefined when there is none, or it is someone else's. */
  async find(owner: string, id: string): Promise<LiveConversation | undefined> {
    const entry = await this.#setup.store.catalog.get(id);
    if (!entry || entry.owner !== owner) return undefined;
    return this.#open(entry);
  }

  /** A new conversation of `owner` with `graph`, under `id` (a fresh one when not given). */
  async create(owner: string, graph: string, id = newId()): Promise<LiveConversation> {
    if (await this.#setup.store.catalog.get(id))
      throw new ApiError(409, `a conversation ${id} exists already`, 'conversation_exists');
    const now = new Date().toISOString();
    const entry: CatalogEntry = { id, graph, owner, created: now, updated: now };
    await this.#setup.store.catalog.put(entry);
    return this.#open(entry);
  }

  /** `owner`'s conversation whose client has seen the history of digest `history`. */
  async recognise(owner: string, history: string): Promise<LiveConversation | undefined> {
    const id = await this.#setup.store.catalog.byHistory(owner, history);
    return id === undefined ? undefined : this.find(owner, id);
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

  #open(entry: CatalogEntry): Promise<LiveConversation> {
    let opening = this.#live.get(entry.id);
    if (!opening) {
      opening = this.#load(entry);
      this.#live.set(entry.id, opening);
      opening.catch(() => this.#live.delete(entry.id));
    }
    return opening;
  }

  async #load(entry: CatalogEntry): Promise<LiveConversation> {
    const { store, agents, world, keyOf } = this.#setup;
    const agent = agents.get(entry.graph);
    if (!agent)
      throw new ApiError(
        409,
        `conversation ${entry.id} is with the graph "${entry.graph}", which this server no longer serves`,
        'graph_not_served',
      );
    const key = keyOf(entry.id);
    const saved = await store.conversations.load(key);
    const graph = conversationGraph(agent.file, saved, { source: `conversation ${entry.id}` });
    const problem = saved && stateMismatch(saved, graph);
    if (problem !== undefined)
      throw new ApiError(
        409,
        `conversation ${entry.id} cannot go on: its state ${problem}`,
        'conversation_mismatch',
      );
    const events = new EventBus();
    const models = new UsageMeter(events).meter(agent.models);
    const open = agentOpener({ ...world, models, events, store, folder: agent.folder });
    const interpreter = await open({ graph });
    const conversation = new Conversation(interpreter, saved, { store: store.conversations, key });
    return new LiveConversation(entry, conversation, this.#setup, () => this.#closeIdle(entry.id));
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

/** A conversation open in this process. */
export class LiveConversation {
  readonly log = new EventLog();
  readonly #conversation: Conversation;
  readonly #setup: HubSetup;
  readonly #onIdle: () => void;
  #entry: CatalogEntry;
  #tail: Promise<unknown> = Promise.resolve();
  #pending = 0;
  #idle: NodeJS.Timeout | undefined;

  constructor(entry: CatalogEntry, conversation: Conversation, setup: HubSetup, onIdle: () => void) {
    this.#entry = entry;
    this.#conversation = conversation;
    this.#setup = setup;
    this.#onIdle = onIdle;
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

  get events(): EventBus {
    return this.interpreter.events;
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
    // Said now when it can be, so that a streamed answer is refused before its stream begins.
    if (this.#pending === 0) this.#refuseIfEnded();
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
    const run = this.#tail.then(() => this.#run(text, options.onDelta));
    this.#tail = run
      .catch(() => undefined)
      .finally(() => {
        if (--this.#pending === 0) this.#armIdle();
      });
    return run;
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

  async #run(text: string | undefined, onDelta?: (delta: string) => void): Promise<TurnResult> {
    this.#refuseIfEnded();
    const usage: TokenUsage = { promptTokens: 0, completionTokens: 0 };
    const stream = onDelta && new ReplyStream(this.interpreter.graph, onDelta);
    const stop = this.events.on((event) => {
      stream?.see(event);
      if (event.type !== 'model.call') return;
      usage.promptTokens += event.usage.promptTokens;
      usage.completionTokens += event.usage.completionTokens;
    });
    try {
      const result = await this.#conversation.reply(text);
      stream?.finish(result.reply);
      const said: Said[] = [
        ...(text ? [{ role: 'user' as const, content: text }] : []),
        ...(result.reply ? [{ role: 'assistant' as const, content: result.reply }] : []),
      ];
      const { owner, graph, history } = this.#entry;
      this.#entry = {
        ...this.#entry,
        updated: new Date().toISOString(),
        history: extendHistory(history ?? historyStart(owner, graph), said),
      };
      await this.#setup.store.catalog.put(this.#entry);
      return { reply: result.reply, ended: result.ended, node: result.state.current, usage };
    } finally {
      stop();
    }
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
    this.#idle = setTimeout(this.#onIdle, this.#setup.idleMs);
    this.#idle.unref();
  }
}

/** A conversation id no one can guess. */
function newId(): string {
  return `conv_${randomBytes(12).toString('base64url')}`;
}
