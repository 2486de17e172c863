/**
 * The interpreter's two kinds of model call: the chatbot answering a chat or thought node (streamed, so
 * a terminal can show the reply as it comes) and the classifier answering a multiple-choice question.
 * Model events (`model.call`, `model.delta`) are the usage
 * meter's to emit (src/llm/usage.ts): it wraps every model and knows each call's role.
 */
import type { CompiledNode } from '../graph/parse.js';
import type { GraphConfig } from '../graph/schema.js';
import type { GraphView } from '../graph/view.js';
import { classify } from '../llm/classify.js';
import type { CompletionRequest, LanguageModel } from '../llm/types.js';
import { countTokens } from '../llm/tokens.js';
import { chatPrompt, classifierPrompt, historyWindow } from './prompt.js';
import { stripSpeakerLabel } from './reply-text.js';
import type { ConversationState } from './state.js';
import type { ChoiceQuestion } from './transitions.js';

/**
 * Asks the chatbot to follow `instruction` at `node`, with the prompt formed from `state` (and the frame's
 * prompt as `prompt` renders it, for an AIPL template), under the graph's sampling settings; returns the
 * reply without a speaker label the model echoed at its start. A prompt's prefix (reply start type
 * `prefix`) goes as a last assistant message only to a model that continues one; any other model is sent
 * the prompt without it, as AutoGRAMS' OpenAI chatbot drops it (autograms/models/openai_chatbot.py:84-108).
 */
export async function generateReply(
  model: LanguageModel,
  graph: GraphView,
  node: CompiledNode,
  state: ConversationState,
  instruction: string,
  prompt?: string,
): Promise<string> {
  const window = historyWindow(graph.config, (text) => countTokens(model.modelName, text));
  const { messages, replyStart, prefix } = chatPrompt(graph, node, state, instruction, window, prompt);
  if (prefix !== undefined && model.capabilities.continuesReply)
    messages.push({ role: 'assistant', content: prefix });
  const purpose = `node ${node.name}`;
  const completion = await model.stream({ messages, purpose, ...generationOf(graph.config) }, () => {});
  return stripSpeakerLabel(completion.text, [replyStart, graph.config.agentName]);
}

/** The graph's `generation` settings as request fields (none: the server's defaults). */
export function generationOf(config: GraphConfig): Pick<CompletionRequest, 'temperature' | 'maxTokens'> {
  const { temperature, maxTokens } = config.generation ?? {};
  return {
    ...(temperature !== undefined && { temperature }),
    ...(maxTokens !== undefined && { maxTokens }),
  };
}

/** Asks the classifier `question` about the conversation; returns the index of the chosen answer. */
export async function askClassifier(
  model: LanguageModel,
  node: CompiledNode,
  question: ChoiceQuestion,
  what: 'transition' | 'interjection',
): Promise<number> {
  const result = await classify(model, {
    prompt: classifierPrompt(question.opening, question.history, question.question),
    choices: question.choices,
    kind: question.kind,
    question: question.question,
    purpose: `${what} from ${node.name}`,
    ...(question.penalties && { penalties: question.penalties }),
  });
  return result.index;
}
