/**
 * Multiple-choice classification the AutoGRAMS way: the classifier answers with one token (a letter,
 * or Yes/No) at temperature 0, with the allowed labels' tokens pushed up (`logit_bias` on a server, a
 * token bias from the model's own tokenizer on the embedded model). Servers that ignore
 * `logit_bias` still work: the answer is parsed leniently ("B.", " b", "The answer is B", "yes"), and an
 * unusable one is sent back with a reminder, a bounded number of times.
 */
import { UserError } from '../errors.js';
import { withRepair } from './repair.js';
import type { Parsed } from './repair.js';
import type { ChatMessage, LanguageModel, TokenUsage } from './types.js';

/** `letters`: choices labelled A, B, C…; `yesno`: two choices, the first meaning Yes, the second No. */
export type ClassifyKind = 'letters' | 'yesno';

/** A question that classify formats with its choices, after optional context messages. */
export interface ClassifyRequest {
  prompt: string;
  context?: ChatMessage[];
  choices: string[];
  /** Default `letters`. */
  kind?: ClassifyKind;
  /** Shown in events and traces, e.g. `transition from greet`. */
  purpose?: string;
  /** The question as its author wrote it, for error messages; default: the first line of the prompt. */
  question?: string;
  /**
   * How much less likely each choice is: logit-bias points below the others' (AutoGRAMS makes its
   * interjections less likely than "None of the above" this way).
   */
  penalties?: number[];
  /** Sampling temperature; default 0. Votes (several calls whose majority decides) need more. */
  temperature?: number;
}

export interface Classification {
  /** Index into `choices`. */
  index: number;
  /** The label chosen: `A`, `B`, … or `Yes` / `No`. */
  label: string;
  /** The model's answer as sent. */
  raw: string;
  attempts: number;
  usage: TokenUsage;
}

const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
/** Later tries allow a few tokens, so a server that ignores logit_bias can say "The answer is B". */
const RETRY_MAX_TOKENS = 8;

/** The labels for `count` choices of `kind`. */
export function choiceLabels(kind: ClassifyKind, count: number): string[] {
  return kind === 'yesno' ? ['Yes', 'No'] : [...LETTERS.slice(0, count)];
}

/**
 * The question as the classifier sees it:
 * `Question\nA. first\nB. second\nAnswer with the letter only.`, or for yes/no
 * `Question\nAnswer Yes or No only.`
 */
export function formatChoiceQuestion(
  question: string,
  choices: readonly string[],
  kind: ClassifyKind = 'letters',
): string {
  if (kind === 'yesno') return `${question.trim()}\nAnswer Yes or No only.`;
  const lines = choices.map((choice, index) => `${LETTERS[index]}. ${choice}`);
  return `${question.trim()}\n${lines.join('\n')}\nAnswer with the letter only.`;
}

/** Asks the classifier (3 tries at most) and returns the chosen choice. */
export async function classify(model: LanguageModel, request: ClassifyRequest): Promise<Classification> {
  const kind = request.kind ?? 'letters';
  const messages: ChatMessage[] = [
    ...(request.context ?? []),
    { role: 'user', content: formatChoiceQuestion(request.prompt, request.choices, kind) },
  ];
  const question = request.question ?? questionExcerpt(messages);
  checkChoices(request.choices, kind, question);
  const labels = choiceLabels(kind, request.choices.length);
  const answerLabels = labels.map((text, index) => ({ text, bias: 100 - (request.penalties?.[index] ?? 0) }));
  const result = await withRepair({
    messages,
    tries: 3,
    what: `classifier question "${question}"`,
    ask: (conversation, attempt) =>
      model.complete({
        messages: conversation,
        maxTokens: attempt === 1 ? 1 : RETRY_MAX_TOKENS,
        temperature: request.temperature ?? 0,
        answerLabels,
        purpose: request.purpose ?? 'classify',
      }),
    parse: (text) => parseChoice(text, kind, request.choices),
    feedback: () =>
      kind === 'yesno' ? 'Answer Yes or No only.' : `Answer with one letter only: ${labels.join(', ')}.`,
  });
  return {
    index: result.value,
    label: labels[result.value] ?? '',
    raw: result.text,
    attempts: result.attempts,
    usage: result.usage,
  };
}

/** Reads a classifier's answer: the index of the choice it names, or why it names none. */
export function parseChoice(text: string, kind: ClassifyKind, choices: readonly string[]): Parsed<number> {
  const answer = text.trim();
  if (answer === '') return { ok: false, error: 'the answer was empty' };
  const index = kind === 'yesno' ? parseYesNo(answer) : parseLetter(answer, choices);
  if (index !== undefined) return { ok: true, value: index };
  const expected = kind === 'yesno' ? 'Yes or No' : `one of ${choiceLabels(kind, choices.length).join(', ')}`;
  return { ok: false, error: `expected ${expected}` };
}

function parseLetter(answer: string, choices: readonly string[]): number | undefined {
  const inRange = (letter: string | undefined) => {
    const index = letter === undefined ? -1 : LETTERS.indexOf(letter.toUpperCase());
    return index >= 0 && index < choices.length ? index : undefined;
  };
  // The whole answer is one letter, in any case: "B", " b", "(b)", "B."
  const alone = /^\(?([a-z])\)?[.):]?$/i.exec(answer);
  if (alone) return inRange(alone[1]);
  // A capital letter followed by punctuation starts the answer: "B. blue", "B) blue", "B: blue".
  const leading = /^\(?([A-Z])[.):]/.exec(answer);
  if (leading) return inRange(leading[1]);
  const stated = /\banswer(?:\s+is)?\s*[:-]?\s*\(?([a-z])\b/i.exec(answer);
  if (stated) return inRange(stated[1]);
  const named = choices.findIndex(
    (choice) => choice.trim().toLowerCase() === answer.replace(/[.!]+$/, '').toLowerCase(),
  );
  if (named >= 0) return named;
  // Last resort: exactly one distinct capital letter that is a valid label ("I think B" with 3 choices).
  const candidates = new Set(
    [...answer.matchAll(/\b([A-Z])\b/g)]
      .map((match) => inRange(match[1]))
      .filter((index) => index !== undefined),
  );
  return candidates.size === 1 ? [...candidates][0] : undefined;
}

function parseYesNo(answer: string): number | undefined {
  const start = /^\W*(yes|no|y|n)\b/i.exec(answer);
  if (start) return start[1]?.toLowerCase().startsWith('y') ? 0 : 1;
  const yes = /\byes\b/i.test(answer);
  const no = /\bno\b/i.test(answer);
  if (yes !== no) return yes ? 0 : 1;
  return undefined;
}

function checkChoices(choices: readonly string[], kind: ClassifyKind, question: string): void {
  if (kind === 'yesno' && choices.length !== 2) {
    throw new UserError(
      `the yes/no question "${question}" needs exactly 2 choices, not ${choices.length}`,
      2,
    );
  }
  if (choices.length < 1 || choices.length > LETTERS.length) {
    throw new UserError(
      `the question "${question}" has ${choices.length} choices; a classifier question takes 1 to ${LETTERS.length}`,
      2,
    );
  }
}

function questionExcerpt(messages: readonly ChatMessage[]): string {
  const last = messages.at(-1)?.content ?? '';
  const firstLine = last.trim().split('\n', 1)[0] ?? '';
  return firstLine.length > 80 ? `${firstLine.slice(0, 80)}…` : firstLine;
}
