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
  | { type: 'error'; message: string; node?: string }
  /**
   * An AIPL template's model-update phase (src/aipl/phase.ts): the calls it made and the answers it
   * served from the turn's cache, how long it took, and what it stored in the state's log.
   */
  | {
      type: 'aipl.phase';
      /** What was rendered: `prompt` or `node NAME`. */
      label: string;
      turn: number;
      calls: number;
      cached: number;
      ms: number;
      stored: { name: string; value: string }[];
    }
  | GoalEvent
  | FlowEvent;

/**
 * What the model of a goal-loop step thought before choosing its command (seed 004's `thoughts`). Every
 * field is model output: untrusted text, possibly empty.
 */
export interface Thoughts {
  text: string;
  reasoning: string;
  plan: string;
  criticism: string;
  speak: string;
}

/** Why a goal-loop run ended: exactly one, from this fixed list. */
export type GoalEndReason =
  | 'task_complete'
  | 'max_steps'
  | 'max_tokens'
  | 'max_cost'
  | 'max_time'
  | 'user'
  | 'loop'
  | 'unusable_answers'
  | 'refused'
  | 'continuous_limit';

/** How a command came to run, or not. */
export type Authorization = 'user' | 'yes' | 'continuous' | 'allow-rule' | 'no-effect';

/** What a run has spent so far, and its limits (absent: none). */
export interface GoalSpend {
  steps: number;
  tokens: number;
  costUsd: number;
  elapsedMs: number;
  maxSteps?: number;
  maxTokens?: number;
  maxCostUsd?: number;
  maxTimeMs?: number;
}

/** The goal loop's events (`meta-agent run`): one step is thoughts -> command -> authorization -> result. */
export type GoalEvent =
  | { type: 'goal.started'; name: string; role: string; goals: string[]; workspace: string; resumed: boolean }
  | { type: 'goal.step'; step: number }
  | { type: 'goal.thoughts'; step: number; thoughts: Thoughts }
  | { type: 'goal.command'; step: number; name: string; args: Record<string, unknown> }
  /** The command waits for the user's answer (y, n, y -N, or feedback). */
  | { type: 'goal.awaiting'; step: number; name: string; args: Record<string, unknown>; reason: string }
  | { type: 'goal.authorized'; step: number; name: string; by: Authorization; continuousLeft?: number }
  | { type: 'goal.refused'; step: number; name: string; feedback?: string }
  | {
      type: 'goal.result';
      step: number;
      name: string;
      ok: boolean;
      /** What the command returned (tool output: untrusted). */
      output: string;
      /** Workspace files the command read, wrote or deleted, relative to the workspace. */
      files: FileTouch[];
    }
  /** An answer the loop could not use; `problem` is what the model is told. */
  | { type: 'goal.unusable'; step: number; problem: string; streak: number }
  /** Something the model and the user are told: a loop forming, a budget running low. */
  | { type: 'goal.warning'; step: number; kind: GoalWarningKind; message: string }
  | ({ type: 'goal.spend' } & GoalSpend)
  | ({ type: 'goal.ended'; reason: GoalEndReason; detail: string } & GoalSpend);

/**
 * What a run warns about: a loop, a budget, a resumed step, its long-term memory, an MCP server, or its
 * voice (speak mode).
 */
export type GoalWarningKind = 'loop' | 'budget' | 'resume' | 'memory' | 'mcp' | 'speech';

/**
 * Where a flow node stands in a pass: asking the model (`running`, `retry` after an answer its
 * after-query step rejected), answered (`done`, perhaps with its fallback), `failed`, `reused` (skipped,
 * its last pass's output kept) or `blocked` (a node it needs failed).
 */
export type FlowNodeStatus = 'running' | 'retry' | 'done' | 'failed' | 'reused' | 'blocked';

/** A flow pass's events (`meta-agent flow run`, or a `flow` node): steps of nodes run at once. */
export type FlowEvent =
  | {
      type: 'flow.started';
      flow: string;
      pass: number;
      /** Every node of the pass, in order. */
      nodes: string[];
      concurrency: number;
      /** True when the pass was begun earlier and goes on from its saved state. */
      resumed: boolean;
    }
  /** The nodes that run together now: each has every output it needs. */
  | { type: 'flow.step'; step: number; nodes: string[] }
  | {
      type: 'flow.node';
      node: string;
      status: FlowNodeStatus;
      /** The answer being asked for (1 for the first). */
      attempt?: number;
      /** Why it was retried, failed or blocked; that a fallback was used. */
      detail?: string;
      /** The node's output (model output: untrusted), when done or reused. */
      output?: unknown;
      /** Tokens its model calls used in this pass; for `reused`, what its last run used (saved now). */
      tokens?: number;
      /** The model that answered (done) or was asked (failed). */
      model?: string;
    }
  /** Text of a running node's answer as it streams in. */
  | { type: 'flow.delta'; node: string; delta: string }
  /** How far a running tool node's call has got, as its MCP server tells (message: untrusted). */
  | { type: 'flow.progress'; node: string; progress: number; total?: number; message?: string }
  /** A temporary change an after-query step asked for: applied, or refused and why. */
  | { type: 'flow.changed'; by: string; change: string; applied: boolean; reason?: string }
  /** Database keys an after-query step wrote. */
  | { type: 'flow.database'; by: string; keys: string[] }
  /** `$db…$` references of a node's prompt the database has no value for: they read as `None`. */
  | { type: 'flow.unset'; node: string; references: string[] }
  /**
   * A node's prompt trimmed to fit the model's context (flow/fit-context.ts): messages between the
   * system messages and the prompt dropped or cut, oldest first; prompt tokens before and after.
   */
  | {
      type: 'flow.trimmed';
      node: string;
      dropped: number;
      cut: number;
      from: number;
      to: number;
      contextTokens: number;
    }
  | {
      type: 'flow.ended';
      pass: number;
      done: number;
      failed: number;
      reused: number;
      blocked: number;
      tokens: number;
      /** Tokens the reused nodes' last runs used: what skipping them saved. */
      savedTokens: number;
      ms: number;
    };

/** One workspace file a command touched. */
export interface FileTouch {
  path: string;
  change: 'read' | 'write' | 'append' | 'delete' | 'list';
}

export type EventListener = (event: AgentEvent) => void;

/** An event as one line of JSON; a variable's value may be anything code made, a BigInt included. */
export function eventJson(event: AgentEvent): string {
  return JSON.stringify(event, (_key, value: unknown) =>
    typeof value === 'bigint' ? value.toString() : value,
  );
}

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
