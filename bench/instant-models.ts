/**
 * Models that answer at once, in process: a benchmark's figures are then the engine's own. The chatbot
 * says `ok`; the classifier picks the first choice (`A`, which a yes/no question reads as no answer and
 * asks again, so yes/no graphs are not benchmarked with these).
 */
import { TEXT_ONLY, type Completion, type LanguageModel, type ModelSet } from '../src/llm/types.js';

function instant(text: string): LanguageModel {
  const completion: Completion = { text, usage: { promptTokens: 0, completionTokens: 0 }, model: 'instant' };
  return {
    id: `bench:instant:${text}`,
    modelName: 'instant',
    capabilities: TEXT_ONLY,
    answersFrom: 'rules',
    complete: () => Promise.resolve(completion),
    stream: (_request, onChunk) => {
      onChunk({ delta: completion.text });
      return Promise.resolve(completion);
    },
    embed: (texts) =>
      Promise.resolve({ vectors: texts.map(() => [0]), usage: completion.usage, model: 'instant' }),
  };
}

const chatbot = instant('ok');

export const instantModels: ModelSet = {
  chatbot,
  classifier: instant('A'),
  userbot: chatbot,
  embedder: chatbot,
};
