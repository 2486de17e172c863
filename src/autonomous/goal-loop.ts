/**
 * The goal loop (seed 004): prompt -> the model's answer -> validated -> authorized -> executed -> the
 * result into the history (and memory) -> next step, until the run ends for exactly one reason
 * (GoalEndReason). What happens next is a pure decision (next-phase.ts, over prompt.ts, answer.ts,
 * authorize.ts, budget.ts, loop-detect.ts); this class is the loop that performs each phase's effects
 * (the model's step in model-step.ts) and saves the run after every phase of a step:
 *
 *   answered (saved) -> approved (saved when a user answered) -> running (saved) -> result (saved)
 *
 * so a run killed at any moment resumes where it was: an approval not given is asked again, an approved
 * command that had not started runs, and a command with a side effect that may have run is never run
 * again (the model is told it was interrupted).
 */
import type { Authorization, EventBus, FileTouch } from '../events.js';
import type { LanguageModel } from '../llm/types.js';
import type { Command, CommandResources, LongTermMemory } from '../../tools/command.js';
import type { CommandRegistry } from '../../tools/registry.js';
import type { Approval } from './authorize.js';
import { CONTEXT_TOKENS, spendOf } from './budget.js';
import type { GoalRunStore } from './goal-run-store.js';
import { judgeLoop, type LoopStep } from './loop-detect.js';
import { ModelStep } from './model-step.js';
import { nextPhase, type Phase } from './next-phase.js';
import { cap, RunBook, RunEnded } from './run-book.js';
import type { PendingCommand, RunState } from './run-state.js';

/** Most characters of a command's output kept in the history (and the prompt). */
export const MAX_OUTPUT_CHARS = 8000;

/** What the user is asked about a command. */
export interface ApprovalRequest {
  step: number;
  command: string;
  args: Record<string, unknown>;
  reason: string;
}

/** Someone who can answer for a command: the terminal UI. */
export interface Approver {
  ask(request: ApprovalRequest, signal: AbortSignal): Promise<Approval>;
}

export interface GoalLoopOptions {
  state: RunState;
  /**
   * The model that answers each step. Metered (llm/usage.ts): the run counts what it spends from the
   * `model.call` events on `events`, its commands' calls included.
   */
  chatbot: LanguageModel;
  /** The commands this run offers. */
  registry: CommandRegistry;
  resources: Partial<CommandResources> & { memory?: LongTermMemory };
  /** Lines for the prompt's Resources section. */
  resourceLines: string[];
  permissions: { yes: boolean; allow: Set<string> };
  /** Present when a user can be asked. */
  approver?: Approver;
  /** Remembers an "always" answer for the workspace. */
  rememberRule?: (command: string) => Promise<void>;
  /** Where the run is saved after every phase of a step: the store, and the run's key there. */
  keptAt: { store: GoalRunStore; key: string };
  events: EventBus;
  /** Most tokens of history a prompt carries (prompt.ts HISTORY_TOKENS by default). */
  historyTokens?: number;
  /**
   * The model's context window in tokens (budget.ts CONTEXT_TOKENS, 8,192, by default). Every prompt is
   * assembled to leave room in it for the answer, and the answer's cap is at most what the prompt
   * leaves; when that is under MIN_ANSWER_TOKENS the run ends with `max_tokens`.
   */
  contextTokens?: number;
  temperature?: number;
  /** Milliseconds, for budgets; default `performance.now`. */
  clock?: () => number;
  /** The date the prompt states; default now. */
  now?: () => Date;
}

export class GoalLoop {
  readonly state: RunState;
  readonly #options: GoalLoopOptions;
  readonly #book: RunBook;
  readonly #model: ModelStep;
  /** Set by `interrupt()`: the next command is asked for, whatever the countdown said. */
  #askNext = false;
  /** The step whose command was last checked and shown (a resumed run's pending command is, once). */
  #shownStep: number | undefined;
  /** The step whose command this process checked or authorized, and takes on to its end (next-phase.ts). */
  #carrying: number | undefined;
  /** Commands the countdown let run in this process: once it runs out with nobody to ask, the run ends. */
  #countdownRan = 0;

  constructor(options: GoalLoopOptions) {
    this.#options = options;
    this.state = options.state;
    const { state, events, keptAt, clock, chatbot, registry, resources, resourceLines, approver } = options;
    const save = async (current: RunState) => {
      // The sub-agents go with the run, so a resumed run messages the same agents again.
      if (resources.agents) current.agents = resources.agents.snapshot();
      await keptAt.store.save(keptAt.key, current);
    };
    this.#book = new RunBook(state, events, save, clock ?? (() => performance.now()));
    this.#model = new ModelStep(this.#book, {
      chatbot,
      registry,
      resources,
      resourceLines,
      canAsk: approver !== undefined,
      historyTokens: options.historyTokens,
      contextTokens: options.contextTokens ?? CONTEXT_TOKENS,
      temperature: options.temperature,
      now: () => options.now?.() ?? new Date(),
      usesTools: () => this.#usesTools(),
    });
  }

  /**
   * Runs until the run ends, and returns its state. A model failure is thrown (the run stays saved at
   * its last phase and can be resumed); `signal` stops the run as the user's (Ctrl+C twice).
   */
  async run(signal: AbortSignal = new AbortController().signal): Promise<RunState> {
    const { state } = this;
    const book = this.#book;
    book.open();
    this.#emitStarted();
    // Every model call of the run is spent from its budget: the steps', and those its commands make
    // (sub-agents, page summaries), all reported on the bus by the metered models.
    const stopCounting = this.#options.events.on((event) => {
      if (event.type !== 'model.call') return;
      state.used.promptTokens += event.usage.promptTokens;
      state.used.completionTokens += event.usage.completionTokens;
      state.used.costUsd += event.costUsd ?? 0;
    });
    try {
      // The run file exists from the start, so a run killed before its first answer can be resumed. A run
      // resumed in the middle of a command is not saved as running again: a store keeps that phase as a
      // claim of whoever moved the command to it (another process, now gone), and this one only settles it.
      if (state.pending?.phase !== 'running') await book.save();
      while (!state.ended) await this.#perform(this.#next(signal), signal);
    } catch (error) {
      if (error instanceof RunEnded) {
        await book.save();
      } else if (signal.aborted) {
        await book.end('user', 'the user stopped the run (Ctrl+C)').catch(() => undefined);
      } else {
        await book.save();
        throw error;
      }
    } finally {
      stopCounting();
    }
    const ended = state.ended!;
    this.#options.events.emit({ type: 'goal.ended', ...ended, ...spendOf(state, book.elapsed()) });
    return state;
  }

  /** Ctrl+C once: stop the countdown and ask before the next command. */
  interrupt(): void {
    this.state.continuousLeft = 0;
    this.#askNext = true;
  }

  #emitStarted(): void {
    const { agent, workspace, used } = this.state;
    this.#options.events.emit({
      type: 'goal.started',
      name: agent.name,
      role: agent.role,
      goals: agent.goals,
      workspace,
      resumed: used.steps > 0 || this.state.history.length > 0,
    });
    this.#book.emitSpend();
  }

  #usesTools(): boolean {
    return this.state.answerFormat !== 'json' && this.#options.chatbot.capabilities.toolCalls;
  }

  /** What the loop does next (next-phase.ts decides). */
  #next(signal: AbortSignal): Phase {
    const { registry, permissions, approver } = this.#options;
    return nextPhase(this.state, {
      stopped: signal.aborted,
      registry,
      permissions: { ...permissions, canAsk: approver !== undefined },
      askNext: this.#askNext,
      shownStep: this.#shownStep,
      carrying: this.#carrying,
      countdownRan: this.#countdownRan,
    });
  }

  /** Performs what `phase` says; every phase but `end` and `step` is about the pending command. */
  async #perform(phase: Phase, signal: AbortSignal): Promise<void> {
    const book = this.#book;
    if (phase.kind === 'end') return book.end(phase.reason, phase.detail);
    if (phase.kind === 'step') {
      await this.#model.take(signal);
      this.#shownStep = this.state.pending?.step;
      return;
    }
    const pending = this.state.pending!;
    switch (phase.kind) {
      case 'drop':
        return book.settle(pending, { kind: 'refused', message: phase.message });
      case 'show':
        pending.command.args = phase.args;
        this.#shownStep = this.#carrying = pending.step;
        this.#options.events.emit({ type: 'goal.command', step: pending.step, ...pending.command });
        return;
      case 'refuse':
        return this.#refuse(pending, phase.command, phase.reason, phase.ends);
      case 'ask':
        return this.#ask(pending, phase.command, phase.reason, signal);
      case 'authorize':
        return this.#authorize(pending, phase.command, phase.by);
      case 'interrupted':
        this.#options.events.emit({
          type: 'goal.warning',
          step: pending.step,
          kind: 'resume',
          message: `${phase.command.name} was running when the run stopped; it is not run again (the model is told to check its effect)`,
        });
        return book.settle(pending, { kind: 'interrupted' });
      case 'execute':
        pending.phase = 'running';
        await book.save();
        return this.#execute(pending, phase.command, signal);
    }
  }

  async #refuse(pending: PendingCommand, command: Command, reason: string, ends: boolean): Promise<void> {
    this.state.refusedStreak += 1;
    this.#options.events.emit({ type: 'goal.refused', step: pending.step, name: command.name });
    await this.#book.settle(pending, {
      kind: 'refused',
      message: `Command ${command.name} was not run: ${reason}. Choose a command that can run, or task_complete.`,
    });
    if (ends) await this.#book.end('refused', reason);
  }

  /** Asks the user, and does what the answer says: run the command, refuse it with feedback, or stop. */
  async #ask(pending: PendingCommand, command: Command, reason: string, signal: AbortSignal): Promise<void> {
    const { events, approver, permissions, rememberRule } = this.#options;
    const { step } = pending;
    const { args } = pending.command;
    this.#askNext = false;
    events.emit({ type: 'goal.awaiting', step, name: command.name, args, reason });
    const approval = await approver!.ask({ step, command: command.name, args, reason }, signal);
    switch (approval.kind) {
      case 'yes':
        break;
      case 'yes-for':
        // This command is the first of the N.
        this.state.continuousLeft = approval.steps - 1;
        break;
      case 'always':
        permissions.allow.add(command.name);
        await rememberRule?.(command.name);
        break;
      case 'no':
        await this.#book.settle(pending, { kind: 'refused', message: 'The user stopped the run.' });
        return this.#book.end('user', `the user answered n to ${command.name}`);
      case 'feedback':
        events.emit({ type: 'goal.refused', step, name: command.name, feedback: approval.text });
        return this.#book.settle(pending, {
          kind: 'refused',
          message: `The user did not run ${command.name} and says: ${approval.text}`,
        });
    }
    this.#authorize(pending, command, 'user');
    // A user's answer is saved at once, so it is never asked for again; a decision taken without
    // asking is taken again the same way on resume, and saved with the next phase.
    await this.#book.save();
  }

  /** Lets the pending command run: its phase is then `approved`, and the loop runs it next. */
  #authorize(pending: PendingCommand, command: Command, by: Authorization): void {
    const { state } = this;
    if (by === 'continuous') {
      state.continuousLeft -= 1;
      this.#countdownRan += 1;
    }
    state.refusedStreak = 0;
    pending.phase = 'approved';
    pending.by = by;
    this.#carrying = pending.step;
    this.#options.events.emit({
      type: 'goal.authorized',
      step: pending.step,
      name: command.name,
      by,
      ...(state.continuousLeft > 0 && { continuousLeft: state.continuousLeft }),
    });
  }

  async #execute(pending: PendingCommand, command: Command, signal: AbortSignal): Promise<void> {
    let output: string;
    let ok = true;
    let files: FileTouch[] = [];
    let complete: string | undefined;
    try {
      const result = await command.run(pending.command.args, { ...this.#options.resources, signal });
      output = result.output;
      files = result.files ?? [];
      complete = result.complete;
    } catch (error) {
      signal.throwIfAborted();
      ok = false;
      output = `Error: ${error instanceof Error ? error.message : String(error)}`;
    }
    output = cap(output, MAX_OUTPUT_CHARS);
    // Remembered before the result is shown, and the spend told again: the step's figures then include
    // what the command's own model calls and the memory's embedding cost, as the run's total does.
    await this.#remember(pending, output);
    this.#book.emitSpend();
    this.#options.events.emit({
      type: 'goal.result',
      step: pending.step,
      name: command.name,
      ok,
      output,
      files,
    });
    await this.#book.settle(pending, { kind: 'command', ok, output, files }, false);
    if (complete !== undefined) return this.#book.end('task_complete', complete);
    this.#watchForLoops();
    await this.#book.save();
  }

  /** Tells the model (and the user) about a loop; ends the run when it goes on after the warning. */
  #watchForLoops(): void {
    const { state } = this;
    const steps: LoopStep[] = state.history.flatMap((entry) =>
      entry.kind === 'command'
        ? [{ step: entry.step, command: entry.command.name, args: entry.command.args, result: entry.output }]
        : [],
    );
    const verdict = judgeLoop(steps, state.loopWarnedAt);
    if (verdict.verdict === 'ok') return;
    if (verdict.verdict === 'stop') throw this.#book.endNow('loop', verdict.message);
    state.loopWarnedAt = state.used.steps;
    this.#book.notice('loop', verdict.message);
  }

  async #remember(pending: PendingCommand, output: string): Promise<void> {
    const { memory } = this.#options.resources;
    if (!memory) return;
    const answer = JSON.stringify({ thoughts: pending.thoughts, command: pending.command });
    await memory.add(`Assistant reply: ${answer}\nResult: ${output}`, {
      run: this.state.id,
      step: String(pending.step),
    });
  }
}
