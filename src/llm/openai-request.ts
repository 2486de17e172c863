/**
 * The OpenAI chat request for one of our CompletionRequests, the same for a whole answer and a stream:
 * options left unset are not sent at all, answer labels become `logit_bias`, and a response format and
 * offered tools take OpenAI's shapes.
 */
import type {
  ChatCompletionCreateParamsBase,
  ChatCompletionFunctionTool,
} from 'openai/resources/chat/completions';
import { labelLogitBias } from './tokens.js';
import type { CompletionRequest, ResponseFormat, ToolSpec } from './types.js';

/**
 * The request's fields for `modelName`. OpenAI itself (`isOpenAI`) wants `max_completion_tokens` (its
 * reasoning models reject `max_tokens`); the compatible servers still read `max_tokens`.
 */
export function chatParams(
  modelName: string,
  isOpenAI: boolean,
  request: CompletionRequest,
): ChatCompletionCreateParamsBase {
  const logitBias = request.answerLabels && labelLogitBias(modelName, request.answerLabels);
  return {
    model: modelName,
    messages: request.messages,
    ...(request.maxTokens !== undefined &&
      (isOpenAI ? { max_completion_tokens: request.maxTokens } : { max_tokens: request.maxTokens })),
    ...(request.temperature !== undefined && { temperature: request.temperature }),
    ...(request.stop && request.stop.length > 0 && { stop: request.stop }),
    ...(logitBias && { logit_bias: logitBias }),
    ...(request.responseFormat && { response_format: toResponseFormat(request.responseFormat) }),
    ...(request.tools && request.tools.length > 0 && { tools: request.tools.map(toTool) }),
  };
}

function toResponseFormat(format: ResponseFormat): ChatCompletionCreateParamsBase['response_format'] {
  if (format.type !== 'json_schema') return { type: format.type };
  return {
    type: 'json_schema',
    json_schema: { name: format.name, schema: format.schema, strict: format.strict ?? false },
  };
}

function toTool(tool: ToolSpec): ChatCompletionFunctionTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}
