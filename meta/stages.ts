/**
 * Turns the designer run into `design.stage` events. A stage is a node `category` in the designer graph,
 * so the stages live in the graph file and follow it when the graph is edited: entering a node of another
 * category ends one stage and starts the next. Retries are where the graph says so (`meta.retry(reason)`
 * in the node that goes round again); helpers add progress and a summary for the done line.
 */
import type { AgentEvent, EventBus } from '../src/events.js';
import type { GraphView } from '../src/graph/view.js';

type Status = Extract<AgentEvent, { type: 'design.stage' }>['status'];

/** Emits design.stage events for one designer run. */
export class StageTracker {
  #current: string | undefined;
  /** Shown with the current stage's done event, e.g. `12 nodes, 15 edges`. */
  #summary: string | undefined;

  constructor(
    private readonly graph: GraphView,
    private readonly events: EventBus,
  ) {}

  /** Follows the interpreter's node.entered events on the bus; returns the unsubscribe function. */
  follow(): () => void {
    return this.events.on((event: AgentEvent) => {
      if (event.type !== 'node.entered') return;
      const stage = this.graph.get(event.node)?.category;
      if (stage && stage !== this.#current) this.begin(stage);
    });
  }

  /** The stage running now, if any. */
  get current(): string | undefined {
    return this.#current;
  }

  /** Ends the current stage and starts `stage`. */
  begin(stage: string): void {
    this.finish();
    this.#current = stage;
    this.#emit('start');
  }

  /** Sets what the current stage's done line says. */
  summarize(summary: string): void {
    this.#summary = summary;
  }

  /** A progress line for the current stage, e.g. `12/40 nodes`. */
  progress(detail: string): void {
    this.#emit('progress', detail);
  }

  /** The current stage goes round again, because of `reason`. */
  retry(reason: string): void {
    this.#summary = undefined;
    this.#emit('retry', reason);
  }

  /** Ends the current stage as done. */
  finish(): void {
    this.#emit('done', this.#summary);
    this.#current = undefined;
    this.#summary = undefined;
  }

  /** Ends the current stage as failed, with the reason. */
  fail(reason: string): void {
    this.#emit('fail', reason);
    this.#current = undefined;
  }

  #emit(status: Status, detail?: string): void {
    if (!this.#current) return;
    this.events.emit({ type: 'design.stage', stage: this.#current, status, ...(detail ? { detail } : {}) });
  }
}
