/**
 * The goal loop's `step` phase: recall memories, assemble the prompt and check it against the budgets
 * (budget.ts), ask the model (with native tool calls until the server refuses them, then in the seed's
 * JSON), and record the answer: the pending command (`answered`, saved), or an unusable answer the model
 * is told about (the third in a row ends the run).
 */
import { toolsUnsupported } from '../llm/errors.js';
import { countMessageTokens, countTokens } from '../llm/tokens.js';
import type { ChatMessage, Completion, LanguageModel, ToolSpec } from '../llm/types.js';
import type { LongTermMemory } from '../../tools/command.js';
import { toolSpecs, type CommandRegistry } from '../../tools/registry.js';
import { parseAnswer, parseToolCall, type ParsedAnswer } from './answer.js';
import { budgetLine, checkBudget, type CallFigures } from './budget.js';
import { goalPrompt } from './prompt.js';
import { cap, type RunBook } from './run-book.js';

/** Unusable answers in a row that end a run: the model is told the problem twice, the third ends it. */
export const MAX_UNUSABLE_ANSWERS = 3;

/** Memories recalled into each prompt. */
const MEMORIES_PER_STEP = 5;

/** What a step needs of the goal loop's options (GoalLoopOptions documents them). */
export interface StepSetup {
  chatbot: LanguageModel;
  registry: CommandRegistry;
  resources: { memory?: LongTermMemory };
  resourceLines: string[];
  /** Someone can be asked: past a soft limit, every command is. */
  canAsk: boolean;
  historyTokens: number | undefined;
  contextTokens: number;
  temperature: number | undefined;
  now: () => Date;
  /** Whether the step is asked for with native tool calls (goal-loop.ts decides). */
  usesTools: () => boolean;
}

export class ModelStep {
  readonly #book: RunBook;
  readonly #setup: StepSetup;

  constructor(book: RunBook, setup: StepSetup) {
    this.#book = book;
    this.#setup = setup;
  }

  /** One step: ask the model, check its answer, and record it as the pending command. */
  async take(signal: AbortSignal): Promise<void> {
    const book = this.#book;
    const { state } = book;
    const memories = await this.#recall();
    let messages = this.#prompt(memories);
    let check = checkBudget(state, this.#figures(messages));
    if (!check.ok) return book.end(check.reason, check.detail);
    if (check.soft.length > 0) {
      for (const { budget, message } of check.soft) {
        state.softWarned.push(budget);
        book.notice('budget', message);
      }
      if (this.#setup.canAsk) state.askAlways = true;
      messages = this.#prompt(memories);
      check = checkBudget(state, this.#figures(messages));
      if (!check.ok) return book.end(check.reason, check.detail);
    }
    const step = state.used.steps + 1;
    book.events.emit({ type: 'goal.step', step });
    const completion = await this.#complete(messages, memories, check.maxTokens, step, signal);
    state.used.steps = step;
    book.emitSpend();
    const answer = this.#parse(completion);
    if (answer.thoughts) book.events.emit({ type: 'goal.thoughts', step, thoughts: answer.thoughts });
    if (!answer.ok) return this.#unusable(step, completion, answer.problem);
    state.unusableStreak = 0;
    book.events.emit({ type: 'goal.command', step, ...answer.command });
    state.pending = { step, thoughts: answer.thoughts, command: answer.command, phase: 'answered' };
    await book.save();
  }

  /** Sends the step's call (`memories` are the step's): with native tools unless the server refused them. */
  async #complete(
    messages: ChatMessage[],
    memories: string[],
    maxTokens: number,
    step: number,
    signal: AbortSignal,
  ): Promise<Completion> {
    const { chatbot, temperature, usesTools } = this.#setup;
    const { state } = this.#book;
    const request = {
      messages,
      maxTokens,
      purpose: `goal step ${step}`,
      signal,
      ...(temperature !== undefined && { temperature }),
    };
    if (!usesTools()) return chatbot.complete(request);
    try {
      return await chatbot.complete({ ...request, tools: this.#tools() });
    } catch (error) {
      if (!toolsUnsupported(error)) throw error;
      state.answerFormat = 'json';
      this.#book.notice(
        'resume',
        'The model server does not take native tool calls: answering in JSON from now on.',
      );
      // The same step, its prompt now asking for the JSON format, and checked again: without the tool
      // definitions it holds more history, and the answer's cap must still fit beside it.
      const messages = this.#prompt(memories);
      const check = checkBudget(state, this.#figures(messages));
      if (!check.ok) throw this.#book.endNow(check.reason, check.detail);
      return chatbot.complete({ ...request, messages, maxTokens: check.maxTokens });
    }
  }

  #tools(): ToolSpec[] {
    return toolSpecs(this.#setup.registry);
  }

  #parse(completion: Completion): ParsedAnswer {
    const { state } = this.#book;
    const call = completion.toolCalls?.[0];
    if (call) {
      if (state.answerFormat === 'auto') state.answerFormat = 'tools';
      return parseToolCall(call, completion.text, this.#setup.registry);
    }
    return parseAnswer(completion.text, this.#setup.registry);
  }

  async #unusable(step: number, completion: Completion, problem: string): Promise<void> {
    const book = this.#book;
    const { state } = book;
    state.unusableStreak += 1;
    const answer = completion.toolCalls?.length
      ? JSON.stringify(completion.toolCalls.map(({ name, arguments: args }) => ({ name, arguments: args })))
      : completion.text;
    state.history.push({ kind: 'unusable', step, answer: cap(answer, 2000), problem });
    book.events.emit({ type: 'goal.unusable', step, problem, streak: state.unusableStreak });
    if (state.unusableStreak >= MAX_UNUSABLE_ANSWERS)
      return book.end(
        'unusable_answers',
        `${MAX_UNUSABLE_ANSWERS} unusable answers in a row; the last: ${problem}`,
      );
    await book.save();
  }

  /** Memories for this step's prompt, from the latest results. */
  async #recall(): Promise<string[]> {
    const { memory } = this.#setup.resources;
    if (!memory) return [];
    const { state } = this.#book;
    const last = state.history.findLast((entry) => entry.kind === 'command');
    // Before its first command a run recalls by its goals: what earlier runs of the agent learned.
    const query = last
      ? `${last.command.name} ${JSON.stringify(last.command.args)}\n${last.output}`
      : state.agent.goals.join('\n');
    const found = await memory.search(query, MEMORIES_PER_STEP);
    return found.map((memory) => memory.text);
  }

  #prompt(memories: string[]): ChatMessage[] {
    const { state } = this.#book;
    const { registry, resourceLines, chatbot, historyTokens, contextTokens, usesTools, now } = this.#setup;
    return goalPrompt({
      state,
      registry,
      resources: resourceLines,
      budget: budgetLine(state, this.#book.elapsed()),
      memories,
      tools: usesTools(),
      modelName: chatbot.modelName,
      contextTokens,
      toolTokens: this.#toolTokens(),
      now: now(),
      ...(historyTokens !== undefined && { historyTokens }),
    });
  }

  #figures(messages: ChatMessage[]): CallFigures {
    const { modelName } = this.#setup.chatbot;
    return {
      promptTokens: countMessageTokens(modelName, messages) + this.#toolTokens(),
      modelName,
      contextTokens: this.#setup.contextTokens,
      elapsedMs: this.#book.elapsed(),
    };
  }

  /** What the tool definitions sent beside the messages cost, when they are sent. */
  #toolTokens(): number {
    const { usesTools, chatbot } = this.#setup;
    return usesTools() ? countTokens(chatbot.modelName, JSON.stringify(this.#tools())) : 0;
  }
}
