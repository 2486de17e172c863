/**
 * The goal loop (seed 004): prompt -> the model's answer -> validated -> authorized -> executed -> the
 * result into the history (and memory) -> next step, until the run ends for exactly one reason
 * (GoalEndReason). The decisions are pure functions (prompt.ts, answer.ts, authorize.ts, budget.ts,
 * loop-detect.ts); this class performs the effects and saves the run after every phase of a step:
 *
 *   answered (saved) -> approved (saved when a user answered) -> running (saved) -> result (saved)
 *
 * so a run killed at any moment resumes where it was: an approval not given is asked again, an approved
 * command that had not started runs, and a command with a side effect that may have run is never run
 * again (the model is told it was interrupted).
 */
import type { EventBus, FileTouch, GoalEndReason } from '../events.js';
import { toolsUnsupported } from '../llm/errors.js';
import { countMessageTokens, countTokens } from '../llm/tokens.js';
import type { ChatMessage, Completion, LanguageModel, ToolSpec } from '../llm/types.js';
import {
  SIDE_EFFECTS,
  type Command,
  type CommandResources,
  type LongTermMemory,
} from '../../tools/command.js';
import { checkArgs, toolSpecs, type CommandRegistry } from '../../tools/registry.js';
import { parseAnswer, parseToolCall, type ParsedAnswer } from './answer.js';
import { decide, type Approval } from './authorize.js';
import { budgetLine, checkBudget, spendOf, type CallFigures } from './budget.js';
import { judgeLoop, type LoopStep } from './loop-detect.js';
import { CONTEXT_TOKENS, goalPrompt } from './prompt.js';
import { type HistoryEntry, type PendingCommand, type RunState } from './run-state.js';

/** Most characters of a command's output kept in the history (and the prompt). */
export const MAX_OUTPUT_CHARS = 8000;

/** Unusable answers in a row that end a run: the model is told the problem twice, the third ends it. */
export const MAX_UNUSABLE_ANSWERS = 3;

/** Refusals in a row, with nobody to ask, that end a run. */
export const MAX_REFUSALS = 2;

/** Memories recalled into each prompt. */
const MEMORIES_PER_STEP = 5;

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
  save: (state: RunState) => Promise<void>;
  events: EventBus;
  /** Most tokens of history a prompt carries (prompt.ts HISTORY_TOKENS by default). */
  historyTokens?: number;
  /**
   * The model's context window in tokens (prompt.ts CONTEXT_TOKENS, 8,192, by default). Every prompt is
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

/** Thrown inside the loop to end the run; caught once in `run`. */
class RunEnded extends Error {}

export class GoalLoop {
  readonly state: RunState;
  readonly #options: GoalLoopOptions;
  readonly #clock: () => number;
  #sessionStart = 0;
  #elapsedBefore = 0;
  /** Set by `interrupt()`: the next command is asked for, whatever the countdown said. */
  #askNext = false;
  /** The step whose command was last checked and shown (a resumed run's pending command is, once). */
  #shownStep: number | undefined;

  constructor(options: GoalLoopOptions) {
    this.#options = options;
    this.state = options.state;
    this.#clock = options.clock ?? (() => performance.now());
  }

  /**
   * Runs until the run ends, and returns its state. A model failure is thrown (the run stays saved at
   * its last phase and can be resumed); `signal` stops the run as the user's (Ctrl+C twice).
   */
  async run(signal: AbortSignal = new AbortController().signal): Promise<RunState> {
    const { state } = this;
    this.#sessionStart = this.#clock();
    this.#elapsedBefore = state.used.elapsedMs;
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
      // The run file exists from the start, so a run killed before its first answer can be resumed.
      await this.#save();
      while (!state.ended) {
        if (signal.aborted) await this.#end('user', 'the user stopped the run (Ctrl+C)');
        else if (state.pending) await this.#carryOut(state.pending, signal);
        else await this.#step(signal);
      }
    } catch (error) {
      if (error instanceof RunEnded) {
        await this.#save();
      } else if (signal.aborted) {
        await this.#end('user', 'the user stopped the run (Ctrl+C)').catch(() => undefined);
      } else {
        await this.#save();
        throw error;
      }
    } finally {
      stopCounting();
    }
    const ended = state.ended!;
    this.#options.events.emit({ type: 'goal.ended', ...ended, ...spendOf(state, this.#elapsed()) });
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
    this.#emitSpend();
  }

  /** One step: ask the model, check its answer, and record it as the pending command. */
  async #step(signal: AbortSignal): Promise<void> {
    const { state } = this;
    const memories = await this.#recall();
    let messages = this.#prompt(memories);
    let check = checkBudget(state, this.#figures(messages));
    if (!check.ok) return this.#end(check.reason, check.detail);
    if (check.soft.length > 0) {
      for (const { budget, message } of check.soft) {
        state.softWarned.push(budget);
        this.#notice('budget', message);
      }
      if (this.#options.approver) state.askAlways = true;
      messages = this.#prompt(memories);
      check = checkBudget(state, this.#figures(messages));
      if (!check.ok) return this.#end(check.reason, check.detail);
    }
    const step = state.used.steps + 1;
    this.#options.events.emit({ type: 'goal.step', step });
    const completion = await this.#ask(messages, memories, check.maxTokens, step, signal);
    state.used.steps = step;
    this.#emitSpend();
    const answer = this.#parse(completion);
    if (answer.thoughts)
      this.#options.events.emit({ type: 'goal.thoughts', step, thoughts: answer.thoughts });
    if (!answer.ok) return this.#unusable(step, completion, answer.problem);
    state.unusableStreak = 0;
    this.#options.events.emit({ type: 'goal.command', step, ...answer.command });
    this.#shownStep = step;
    state.pending = { step, thoughts: answer.thoughts, command: answer.command, phase: 'answered' };
    await this.#save();
  }

  /** Sends the step's call (`memories` are the step's): with native tools unless the server refused them. */
  async #ask(
    messages: ChatMessage[],
    memories: string[],
    maxTokens: number,
    step: number,
    signal: AbortSignal,
  ): Promise<Completion> {
    const { state } = this;
    const request = {
      messages,
      maxTokens,
      purpose: `goal step ${step}`,
      signal,
      ...(this.#options.temperature !== undefined && { temperature: this.#options.temperature }),
    };
    if (!this.#usesTools()) return this.#options.chatbot.complete(request);
    try {
      return await this.#options.chatbot.complete({ ...request, tools: this.#tools() });
    } catch (error) {
      if (!toolsUnsupported(error)) throw error;
      state.answerFormat = 'json';
      this.#notice(
        'resume',
        'The model server does not take native tool calls: answering in JSON from now on.',
      );
      // The same step, its prompt now asking for the JSON format, and checked again: without the tool
      // definitions it holds more history, and the answer's cap must still fit beside it.
      const messages = this.#prompt(memories);
      const check = checkBudget(state, this.#figures(messages));
      if (!check.ok) throw this.#endNow(check.reason, check.detail);
      return this.#options.chatbot.complete({ ...request, messages, maxTokens: check.maxTokens });
    }
  }

  #usesTools(): boolean {
    return this.state.answerFormat !== 'json' && this.#options.chatbot.capabilities.toolCalls;
  }

  #tools(): ToolSpec[] {
    return toolSpecs(this.#options.registry);
  }

  #parse(completion: Completion): ParsedAnswer {
    const call = completion.toolCalls?.[0];
    if (call) {
      if (this.state.answerFormat === 'auto') this.state.answerFormat = 'tools';
      return parseToolCall(call, completion.text, this.#options.registry);
    }
    return parseAnswer(completion.text, this.#options.registry);
  }

  async #unusable(step: number, completion: Completion, problem: string): Promise<void> {
    const { state } = this;
    state.unusableStreak += 1;
    const answer = completion.toolCalls?.length
      ? JSON.stringify(completion.toolCalls.map(({ name, arguments: args }) => ({ name, arguments: args })))
      : completion.text;
    state.history.push({ kind: 'unusable', step, answer: cap(answer, 2000), problem });
    this.#options.events.emit({ type: 'goal.unusable', step, problem, streak: state.unusableStreak });
    if (state.unusableStreak >= MAX_UNUSABLE_ANSWERS)
      return this.#end(
        'unusable_answers',
        `${MAX_UNUSABLE_ANSWERS} unusable answers in a row; the last: ${problem}`,
      );
    await this.#save();
  }

  /** Takes the pending command as far as it can go: authorization, then execution. */
  async #carryOut(pending: PendingCommand, signal: AbortSignal): Promise<void> {
    const command = this.#options.registry.get(pending.command.name);
    if (!command) {
      return this.#settle(pending, {
        kind: 'refused',
        message: `${pending.command.name} is not available in this run any more (it was resumed without what it needs). Choose another command.`,
      });
    }
    // A pending command this process did not see answered comes from a run file: its arguments are
    // checked again, and shown before anything is asked or run, so the user sees what is at stake.
    if (this.#shownStep !== pending.step) {
      const checked = checkArgs(command, pending.command.args);
      if (!checked.ok)
        return this.#settle(pending, {
          kind: 'refused',
          message: `${command.name} was not run: ${checked.problem}`,
        });
      pending.command.args = checked.args;
      this.#shownStep = pending.step;
      this.#options.events.emit({ type: 'goal.command', step: pending.step, ...pending.command });
    }
    if (pending.phase === 'answered') {
      const approved = await this.#authorize(pending, command, signal);
      if (!approved) return;
    }
    if (pending.phase === 'running' && SIDE_EFFECTS.has(command.effect)) {
      this.#options.events.emit({
        type: 'goal.warning',
        step: pending.step,
        kind: 'resume',
        message: `${command.name} was running when the run stopped; it is not run again (the model is told to check its effect)`,
      });
      return this.#settle(pending, { kind: 'interrupted' });
    }
    pending.phase = 'running';
    await this.#save();
    await this.#execute(pending, command, signal);
  }

  /** Decides, asking the user when needed. True when the command may run (the pending phase is then `approved`). */
  async #authorize(pending: PendingCommand, command: Command, signal: AbortSignal): Promise<boolean> {
    const { state } = this;
    const { approver, permissions } = this.#options;
    let decision = decide(command, state, { ...permissions, canAsk: approver !== undefined });
    if (decision.kind === 'run' && this.#askNext && approver && command.effect !== 'none')
      decision = { kind: 'ask', reason: 'you pressed Ctrl+C' };
    if (decision.kind === 'refuse') {
      state.refusedStreak += 1;
      this.#options.events.emit({ type: 'goal.refused', step: pending.step, name: command.name });
      await this.#settle(pending, {
        kind: 'refused',
        message: `Command ${command.name} was not run: ${decision.reason}. Choose a command that can run, or task_complete.`,
      });
      if (state.refusedStreak >= MAX_REFUSALS) await this.#end('refused', decision.reason);
      return false;
    }
    let by = decision.kind === 'run' ? decision.by : 'user';
    if (decision.kind === 'ask') {
      this.#askNext = false;
      this.#options.events.emit({
        type: 'goal.awaiting',
        step: pending.step,
        name: command.name,
        args: pending.command.args,
        reason: decision.reason,
      });
      const approval = await approver!.ask(
        { step: pending.step, command: command.name, args: pending.command.args, reason: decision.reason },
        signal,
      );
      const outcome = await this.#apply(approval, pending, command);
      if (outcome !== 'run') return false;
      by = 'user';
    } else if (decision.by === 'continuous') {
      state.continuousLeft -= 1;
    }
    state.refusedStreak = 0;
    pending.phase = 'approved';
    pending.by = by;
    this.#options.events.emit({
      type: 'goal.authorized',
      step: pending.step,
      name: command.name,
      by,
      ...(state.continuousLeft > 0 && { continuousLeft: state.continuousLeft }),
    });
    // A user's answer is saved at once, so it is never asked for again; a decision taken without
    // asking is taken again the same way on resume, and saved with the next phase.
    if (decision.kind === 'ask') await this.#save();
    return true;
  }

  /** What the user's answer does: run it, refuse it with feedback, or stop the run. */
  async #apply(approval: Approval, pending: PendingCommand, command: Command): Promise<'run' | 'stop'> {
    const { state } = this;
    switch (approval.kind) {
      case 'yes':
        return 'run';
      case 'yes-for':
        // This command is the first of the N.
        state.continuousLeft = approval.steps - 1;
        return 'run';
      case 'always':
        this.#options.permissions.allow.add(command.name);
        await this.#options.rememberRule?.(command.name);
        return 'run';
      case 'no':
        await this.#settle(pending, { kind: 'refused', message: 'The user stopped the run.' });
        await this.#end('user', `the user answered n to ${command.name}`);
        return 'stop';
      case 'feedback':
        this.#options.events.emit({
          type: 'goal.refused',
          step: pending.step,
          name: command.name,
          feedback: approval.text,
        });
        await this.#settle(pending, {
          kind: 'refused',
          message: `The user did not run ${command.name} and says: ${approval.text}`,
        });
        return 'stop';
    }
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
    this.#options.events.emit({
      type: 'goal.result',
      step: pending.step,
      name: command.name,
      ok,
      output,
      files,
    });
    await this.#settle(pending, { kind: 'command', ok, output, files }, false);
    await this.#remember(pending, output);
    if (complete !== undefined) return this.#end('task_complete', complete);
    this.#watchForLoops();
    await this.#save();
  }

  /** Moves the pending command into the history as `entry` and saves (unless the caller saves next). */
  async #settle(
    pending: PendingCommand,
    entry:
      | { kind: 'refused'; message: string }
      | { kind: 'interrupted' }
      | { kind: 'command'; ok: boolean; output: string; files: FileTouch[] },
    save = true,
  ): Promise<void> {
    const { step, thoughts, command } = pending;
    this.state.history.push({ ...entry, step, thoughts, command } as HistoryEntry);
    delete this.state.pending;
    if (save) await this.#save();
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
    if (verdict.verdict === 'stop') throw this.#endNow('loop', verdict.message);
    state.loopWarnedAt = state.used.steps;
    this.#notice('loop', verdict.message);
  }

  #notice(kind: 'loop' | 'budget' | 'resume', message: string): void {
    const step = this.state.used.steps;
    this.state.history.push({ kind: 'notice', step, text: message });
    this.#options.events.emit({ type: 'goal.warning', step, kind, message });
  }

  /** Memories for this step's prompt, from the latest results. */
  async #recall(): Promise<string[]> {
    const { memory } = this.#options.resources;
    if (!memory) return [];
    const last = this.state.history.findLast((entry) => entry.kind === 'command');
    // Before its first command a run recalls by its goals: what earlier runs of the agent learned.
    const query = last
      ? `${last.command.name} ${JSON.stringify(last.command.args)}\n${last.output}`
      : this.state.agent.goals.join('\n');
    const found = await memory.search(query, MEMORIES_PER_STEP);
    return found.map((memory) => memory.text);
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

  #prompt(memories: string[]): ChatMessage[] {
    const { state } = this;
    const { registry, resourceLines, chatbot, historyTokens } = this.#options;
    return goalPrompt({
      state,
      registry,
      resources: resourceLines,
      budget: budgetLine(state, this.#elapsed()),
      memories,
      tools: this.#usesTools(),
      modelName: chatbot.modelName,
      contextTokens: this.#contextTokens(),
      toolTokens: this.#toolTokens(),
      now: this.#options.now?.() ?? new Date(),
      ...(historyTokens !== undefined && { historyTokens }),
    });
  }

  #figures(messages: ChatMessage[]): CallFigures {
    const modelName = this.#options.chatbot.modelName;
    return {
      promptTokens: countMessageTokens(modelName, messages) + this.#toolTokens(),
      modelName,
      contextTokens: this.#contextTokens(),
      elapsedMs: this.#elapsed(),
    };
  }

  /** What the tool definitions sent beside the messages cost, when they are sent. */
  #toolTokens(): number {
    return this.#usesTools()
      ? countTokens(this.#options.chatbot.modelName, JSON.stringify(this.#tools()))
      : 0;
  }

  #contextTokens(): number {
    return this.#options.contextTokens ?? CONTEXT_TOKENS;
  }

  #elapsed(): number {
    return this.#elapsedBefore + (this.#clock() - this.#sessionStart);
  }

  #emitSpend(): void {
    this.#options.events.emit({ type: 'goal.spend', ...spendOf(this.state, this.#elapsed()) });
  }

  async #save(): Promise<void> {
    this.state.used.elapsedMs = Math.round(this.#elapsed());
    await this.#options.save(this.state);
  }

  async #end(reason: GoalEndReason, detail: string): Promise<void> {
    this.state.ended = { reason, detail };
    await this.#save();
  }

  /** Ends the run from inside a step (loop detection); `run` catches what this returns when thrown. */
  #endNow(reason: GoalEndReason, detail: string): RunEnded {
    this.state.ended = { reason, detail };
    return new RunEnded(detail);
  }
}

function cap(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n… (${text.length - max} more characters cut)`;
}
