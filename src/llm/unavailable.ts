/**
 * Models that are not there: each call fails with the error that says why. For a run that may need no
 * model at all (a graph of code nodes, a flow of MCP tool calls), so none is looked for, started or
 * downloaded until a call needs one.
 */
import type { UserError } from '../errors.js';
import { TEXT_ONLY, type LanguageModel, type ModelSet } from './types.js';

/** Models that answer every call with `error`. */
export function unavailableModels(error: UserError): ModelSet {
  const fail = () => Promise.reject(error);
  const model: LanguageModel = {
    id: 'unavailable',
    modelName: 'unavailable',
    capabilities: TEXT_ONLY,
    answersFrom: 'model',
    complete: fail,
    stream: fail,
    embed: fail,
  };
  return { chatbot: model, classifier: model, userbot: model, embedder: model };
}
