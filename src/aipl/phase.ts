/**
 * The model-update phase: everything about a template the model decides, before the pure renderer runs.
 *
 * 1. Updates. The template is walked against the state as it stands: block conditions and update
 *    conditions are decided, asking the model what only it can tell (soft functions, coercions), and each
 *    update whose condition holds asks its question. Whatever one walk waits for is asked at once, up to
 *    `concurrency` calls in flight, and the walk is repeated with the answers until it waits for nothing.
 *    The answers are then stored in the template's order (the last value of a name wins).
 * 2. Text. The template is walked again against the state with this turn's answers, to decide which
 *    blocks are shown; a condition that reads nothing new is a cached answer, not a new call.
 * 3. The renderer fills in the text.
 *
 * Answers are cached by what was asked and the turn, so a template rendered twice in a turn (two chat
 * nodes, or a prompt and an instruction) costs its calls once, and the next turn asks afresh.
 */
import type { EventBus } from '../events.js';
import { classify } from '../llm/classify.js';
import type { ChatMessage, LanguageModel } from '../llm/types.js';
import { mapBounded } from '../map-bounded.js';
import type { Part, SpecialName, Template } from './ast.js';
import { walkTemplate, type Answers, type Ask, type DueUpdate, type Scope, type Value } from './evaluate.js';
import { renderParts } from './render.js';
import { latestValues, type AiplEntry, type AiplState } from './state.js';

/** The graph's `config.aipl`, defaults filled in. */
export interface AiplSettings {
  /** Calls per soft function, the majority deciding: 1, 3 or 5. */
  votes: 1 | 3 | 5;
  /** Sampling temperature of the votes when there is more than one (one call is asked at 0). */
  voteTemperature: number;
  /** Model calls in flight at once. */
  concurrency: number;
  /** Natural-language definitions of soft functions, by name, shown to the model with the call. */
  functions: Readonly<Record<string, string>>;
}

export const DEFAULT_AIPL_SETTINGS: AiplSettings = {
  votes: 1,
  voteTemperature: 0.7,
  concurrency: 8,
  functions: {},
};

/** Answers given in one turn, by what was asked. */
export class AiplCache {
  #turn = -1;
  #answers = new Map<string, Value>();

  /** The answers of `turn`; a new turn starts empty. */
  answersOf(turn: number): Map<string, Value> {
    if (turn !== this.#turn) {
      this.#turn = turn;
      this.#answers = new Map();
    }
    return this.#answers;
  }
}

export interface PhaseInput {
  template: Template;
  /** The conversation's AIPL state; answers are appended to its log. */
  state: AiplState;
  /** The autogram's variables in scope (`vars.name`). */
  vars: Readonly<Record<string, unknown>>;
  names: Pick<Record<SpecialName, string>, 'char' | 'user' | 'assistant'>;
  clock: Pick<Record<SpecialName, string>, 'date' | 'time'>;
  /**
   * The conversation as user and assistant messages, without system messages or instructions: what
   * update questions are answered from. With no user message in it, no question is asked yet.
   */
  conversation: readonly ChatMessage[];
  models: { chatbot: LanguageModel; classifier: LanguageModel };
  settings: AiplSettings;
  cache: AiplCache;
  events?: EventBus;
  /** What the template is, in events: `prompt`, `node greet`. */
  label: string;
}

export interface PhaseResult {
  text: string;
  stored: AiplEntry[];
  /** Model calls made (each vote and each retry counts). */
  calls: number;
  /** Answers taken from this turn's cache instead. */
  cached: number;
  ms: number;
}

/** Runs the phase and renders `input.template`. */
export async function renderWithModel(input: PhaseInput): Promise<PhaseResult> {
  const started = performance.now();
  const answers = input.cache.answersOf(input.state.turn);
  const earlier = new Set(answers.keys());
  const read = new Set<string>();
  const recorded: Answers = {
    has: (key) => (read.add(key), answers.has(key)),
    get: (key) => answers.get(key),
  };
  const asking = input.conversation.some((message) => message.role === 'user');

  const calls = { made: 0 };
  const before = await settle(input, answers, recorded, calls, asking);
  const stored = store(input.state, before.due, answers);
  const after = await settle(input, answers, recorded, calls, false);
  const text = renderParts(input.template.parts, scopeOf(input), after.shown);
  const counts = { calls: calls.made, cached: [...read].filter((key) => earlier.has(key)).length };

  const ms = Math.round(performance.now() - started);
  if (hasModelWork(input.template.parts))
    input.events?.emit({
      type: 'aipl.phase',
      label: input.label,
      turn: input.state.turn,
      calls: counts.calls,
      cached: counts.cached,
      ms,
      stored: stored.map(({ name, value }) => ({ name, value })),
    });
  return { text, stored, calls: counts.calls, cached: counts.cached, ms };
}

/** Whether a template has a model-update phase at all: an update or a block; else it only fills in names. */
function hasModelWork(parts: readonly Part[]): boolean {
  return parts.some((part) => part.kind === 'update' || part.kind === 'block');
}

function scopeOf(input: PhaseInput): Scope {
  return {
    values: latestValues(input.state.log),
    vars: input.vars,
    specials: { ...input.names, ...input.clock },
  };
}

/** Walks until nothing is missing, asking what each walk waits for all at once. */
async function settle(
  input: PhaseInput,
  answers: Map<string, Value>,
  recorded: Answers,
  calls: { made: number },
  asking: boolean,
) {
  const scope = scopeOf(input);
  for (;;) {
    const walk = walkTemplate(input.template.parts, scope, recorded, asking);
    if (walk.needs.length === 0) return walk;
    const jobs = walk.needs.flatMap((ask) =>
      Array.from({ length: votesFor(ask, input.settings) }, () => ask),
    );
    const results = await mapBounded(jobs, input.settings.concurrency, (ask) => answer(ask, input));
    calls.made += results.reduce((sum, result) => sum + result.calls, 0);
    for (const ask of walk.needs)
      answers.set(ask.key, majority(results.flatMap((result, i) => (jobs[i] === ask ? [result.value] : []))));
  }
}

function votesFor(ask: Ask, settings: AiplSettings): number {
  return ask.kind === 'soft' ? settings.votes : 1;
}

/** The most frequent answer; a tie goes to the one given first. Text is compared ignoring case. */
function majority(values: Value[]): Value {
  const tally = new Map<string, { value: Value; count: number }>();
  for (const value of values) {
    const key = typeof value === 'string' ? value.trim().toLowerCase() : String(value);
    const entry = tally.get(key) ?? { value, count: 0 };
    entry.count += 1;
    tally.set(key, entry);
  }
  let best: { value: Value; count: number } | undefined;
  for (const entry of tally.values()) if (!best || entry.count > best.count) best = entry;
  return best?.value;
}

/** What the model answered, and how many calls it took. */
type Answered = { value: Value; calls: number };

async function answer(ask: Ask, input: PhaseInput): Promise<Answered> {
  const { chatbot, classifier } = input.models;
  const voting = ask.kind === 'soft' && input.settings.votes > 1;
  const temperature = voting ? input.settings.voteTemperature : 0;
  switch (ask.kind) {
    case 'question': {
      const completion = await chatbot.complete({
        messages: [...input.conversation, { role: 'user', content: questionPrompt(ask.text) }],
        temperature: 0,
        maxTokens: 200,
        purpose: `aipl: ${ask.text}`,
      });
      return { value: completion.text, calls: 1 };
    }
    case 'soft':
      if (ask.as === 'truth')
        return truthOf(classifier, softPrompt(ask, input.settings), ask.call, temperature);
      return valueOf(chatbot, softValuePrompt(ask, input.settings), ask.call, ask.as, temperature);
    case 'coerce':
      if (ask.as === 'boolean')
        return truthOf(classifier, coercePrompt(ask.text, 'boolean'), `coerce "${ask.text}"`, 0);
      return valueOf(chatbot, coercePrompt(ask.text, 'number'), `coerce "${ask.text}"`, 'number', 0);
  }
}

async function truthOf(
  model: LanguageModel,
  prompt: string,
  what: string,
  temperature: number,
): Promise<Answered> {
  const result = await classify(model, {
    prompt,
    choices: ['true', 'false'],
    question: what,
    purpose: `aipl: ${what}`,
    temperature,
  });
  return { value: result.index === 0, calls: result.attempts };
}

async function valueOf(
  model: LanguageModel,
  prompt: string,
  what: string,
  as: 'number' | 'text',
  temperature: number,
): Promise<Answered> {
  const completion = await model.complete({
    messages: [{ role: 'user', content: prompt }],
    temperature,
    maxTokens: 60,
    purpose: `aipl: ${what}`,
  });
  const text = firstLine(completion.text);
  if (as === 'text') return { value: text, calls: 1 };
  const number = /[-+]?(\d+(\.\d*)?|\.\d+)/.exec(text.replaceAll(',', ''));
  return { value: number ? Number(number[0]) : NaN, calls: 1 };
}

/** The question an update asks, after the conversation (seed: without system messages). */
function questionPrompt(question: string): string {
  return `Answer this question about the conversation above: ${question}\nAnswer with the answer alone, in a few words. If the conversation does not tell, answer "unknown".`;
}

/** A soft function's definition, when the graph gives one. */
function definitionOf(fn: string, settings: AiplSettings): string {
  const definition = Object.hasOwn(settings.functions, fn) ? settings.functions[fn] : undefined;
  return definition ? `${fn}: ${definition}\n` : '';
}

/** The seed's own wording for a soft boolean function. */
function softPrompt(ask: { fn: string; call: string }, settings: AiplSettings): string {
  return `${definitionOf(ask.fn, settings)}How would the following function evaluate if it MUST return true or false? ${ask.call}`;
}

function softValuePrompt(ask: { fn: string; call: string; as: string }, settings: AiplSettings): string {
  const answer = ask.as === 'number' ? 'a number alone, in digits' : 'its value alone';
  return `${definitionOf(ask.fn, settings)}How would the following function evaluate? ${ask.call}\nAnswer with ${answer}.`;
}

function coercePrompt(text: string, as: 'number' | 'boolean'): string {
  const value = JSON.stringify(text);
  return as === 'number'
    ? `What number does this text state? ${value}\nAnswer with the number alone, in digits, or "unknown".`
    : `Read this text as a yes-or-no value: does it mean true (yes) or false (no)? ${value}`;
}

function firstLine(text: string): string {
  return unquoted(text.trim().split('\n', 1)[0] ?? '');
}

function unquoted(text: string): string {
  return text
    .trim()
    .replace(/^"(.*)"$/s, '$1')
    .trim();
}

/** An answer that says nothing: not stored, so the last value (or the fallback) stays. */
const NO_ANSWER = /^(unknown|n\/a|none|not (stated|mentioned|known))?[.!]?$/i;

/** Appends the due updates' answers to the log in the template's order, skipping non-answers and repeats. */
function store(
  state: AiplState,
  due: readonly DueUpdate[],
  answers: ReadonlyMap<string, Value>,
): AiplEntry[] {
  const stored: AiplEntry[] = [];
  for (const { update, question, key } of due) {
    const value = unquoted(String(answers.get(key) ?? ''));
    const name = `${update.target.namespace}.${update.target.key}`;
    if (NO_ANSWER.test(value) || latestValues(state.log).get(name) === value) continue;
    const entry = { name, value, turn: state.turn, question };
    state.log.push(entry);
    stored.push(entry);
  }
  return stored;
}
