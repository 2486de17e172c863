/**
 * The typed event stream. The interpreter and the designer emit these; the TUI, the
 * `--json` output and the JSONL trace file are three consumers of the same stream. A leaf module.
 */

/**
 * The four jobs a model does for an agent; each may use its own model and endpoint. Declared here, not
 * in llm/, so that this module stays a leaf: the LLM layer imports the event types, not the other way.
 */
export type ModelRole = 'chatbot' | 'classifier' | 'userbot' | 'embedder';

/** Tokens one model call used. */
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

export type TransitionKind =
  | 'single'
  | 'choice'
  | 'wildcard'
  | 'return'
  | 'variable'
  | 'interjection'
  | 'function-call'
  | 'quit'
  | 'start';

export type AgentEvent =
  | { type: 'run.started'; graph: string; nodes: number; version: number }
  | { type: 'node.entered'; node: string; action: string; depth: number }
  | {
      type: 'model.call';
      role: ModelRole;
      model: string;
      purpose: string;
      usage: TokenUsage;
      /** Estimated dollars; absent when the model has no known price (local, scripted). */
      costUsd?: number;
      ms: number;
      scripted: boolean;
    }
  | { type: 'model.delta'; role: ModelRole; purpose: string; delta: string }
  | {
      type: 'transition';
      from: string;
      to: string;
      kind: TransitionKind;
      question?: string;
      choices?: string[];
      answer?: string;
    }
  | { type: 'variable.set'; name: string; value: unknown; node: string }
  /** One line a code node printed with `console.log` (or info, warn, error, debug). */
  | { type: 'code.log'; node: string; text: string }
  | { type: 'reply'; node: string; text: string }
  | { type: 'user'; text: string }
  | {
      type: 'graph.edited';
      version: number;
      by: string;
      op: 'add' | 'update' | 'remove' | 'add-transition' | 'revert';
      /** Nodes added or changed by this edit. */
      nodes: string[];
      totalNodes: number;
    }
  | {
      type: 'design.stage';
      stage: string;
      status: 'start' | 'progress' | 'done' | 'retry' | 'fail';
      detail?: string;
    }
  | { type: 'error'; message: string; node?: string };

export type EventListener = (event: AgentEvent) => void;

/** A minimal synchronous fan-out. Listeners run in the emitter's call stack, so they must be quick. */
export class EventBus {
  readonly #listeners = new Set<EventListener>();

  on(listener: EventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  emit(event: AgentEvent): void {
    for (const listener of this.#listeners) listener(event);
  }
}
