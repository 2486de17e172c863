/**
 * The one-token classification round trip, with a question whose answer doctor knows: which of three
 * words is a colour. It is asked twice, the choices reordered so that the colour has another letter:
 * every letter is then wrong at least once, so a model that always gives the same one (as a broken chat
 * template can make it) does not pass by luck. Ok means both answers were right.
 */
import { UserError } from '../../errors.js';
import { classify } from '../../llm/classify.js';
import { createModels } from '../../llm/config.js';
import type { ResolvedEndpoints } from '../../llm/config.js';
import { labelLogitBias } from '../../llm/tokens.js';
import type { LanguageModel } from '../../llm/types.js';
import type { Check } from './check.js';

const QUESTION = 'Which of these is a colour?';
const COLOUR = 'blue';
/** The colour is B, then A. */
const ORDERS: readonly string[][] = [
  ['seven', 'blue', 'Tuesday'],
  ['blue', 'Tuesday', 'seven'],
];

/** One answer: its label, the choice it names, and the tries it took. */
interface Answer {
  label: string;
  choice: string;
  attempts: number;
}

/** Asks the classifier of `endpoints` the question in each order and judges the answers. */
export async function checkClassification(endpoints: ResolvedEndpoints): Promise<Check> {
  let classifier: LanguageModel;
  const answers: Answer[] = [];
  try {
    ({ classifier } = await createModels(endpoints));
    for (const choices of ORDERS) {
      const result = await classify(classifier, { prompt: QUESTION, choices, purpose: 'doctor' });
      answers.push({ label: result.label, choice: choices[result.index] ?? '', attempts: result.attempts });
    }
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    return { status: 'fail', name: 'classify', detail: error.message, fix: error.hint };
  }
  const given = answers.map(({ label, choice }) => `${label} (${choice})`).join(', then ');
  const answered = `${given} with the choices reordered`;
  if (answers.every((answer) => answer.choice === COLOUR)) {
    return {
      status: 'ok',
      name: 'classify',
      detail: `${classifier.modelName} answered ${answered} (${tries(answers)}); ${biasNote(classifier)}`,
    };
  }
  // Not a capability: a rules file's wrong answer is what its author wrote, so it only warns.
  const scripted = classifier.answersFrom === 'rules';
  return {
    status: scripted ? 'warn' : 'fail',
    name: 'classify',
    detail: `${classifier.modelName} answered "${QUESTION}" with ${answered}; expected ${COLOUR} both times`,
    fix: scripted
      ? 'a script answers what its rules say: give the classifier a rule for this question, or ignore this line'
      : 'the model may be too small, or misconfigured (its chat template), to classify, and would choose transitions wrongly; try another with --classifier-model, -m or META_AGENT_CLASSIFIER_MODEL',
  };
}

function tries(answers: readonly Answer[]): string {
  const counts = answers.map(({ attempts }) => (attempts === 1 ? '1 try' : `${attempts} tries`));
  return counts.every((count) => count === counts[0]) ? `${counts[0]} each` : counts.join(', then ');
}

function biasNote(classifier: LanguageModel): string {
  if (classifier.answersFrom === 'rules') return 'scripted';
  switch (classifier.capabilities.answerLabels) {
    case 'token-bias':
      return "token bias on, from the model's own tokenizer";
    case 'logit-bias':
      return labelLogitBias(classifier.modelName, [{ text: 'A', bias: 100 }])
        ? 'logit_bias on'
        : 'no logit_bias (tokenizer unknown)';
    case 'none':
      return 'no label bias';
  }
}
