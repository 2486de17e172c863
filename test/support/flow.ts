/**
 * What the flow tests share: flows from node lists, and a model that answers each flow node by name
 * (from the request's purpose), records every request, and can take its time like a server.
 */
import type { AgentEvent } from '../../src/events.js';
import { EventBus } from '../../src/events.js';
import {
  flowFileSchema,
  type FlowFile,
  type FlowFileInput,
  type FlowNodeInput,
} from '../../src/flow/schema.js';
import {
  TEXT_ONLY,
  type ChatMessage,
  type CompletionRequest,
  type LanguageModel,
} from '../../src/llm/types.js';

/** A flow file of `nodes`, with anything else over the defaults. */
export function flowOf(nodes: FlowNodeInput[], rest: Omit<FlowFileInput, 'nodes'> = {}): FlowFile {
  return flowFileSchema.parse({ name: 'test-flow', ...rest, nodes });
}

/** One request the model received, with the node it was for. */
export interface FlowCall {
  node: string;
  messages: ChatMessage[];
  request: CompletionRequest;
}

/** Decides an answer: the node, its messages, and how many times that node has been asked before. */
export type Answerer = (node: string, messages: ChatMessage[], asked: number) => string;

/**
 * A model that answers flow nodes through `answer` (default: `answer of NODE`), after `delayMs`. It is
 * a stand-in for a server, not for any module of ours: the runner cannot tell it from one.
 */
export function flowModel(answer: Answerer = (node) => `answer of ${node}`, delayMs = 0) {
  const calls: FlowCall[] = [];
  const asked = new Map<string, number>();
  const complete = async (request: CompletionRequest) => {
    const node = (request.purpose ?? '').replace(/^flow node /, '');
    calls.push({ node, messages: request.messages, request });
    const count = asked.get(node) ?? 0;
    asked.set(node, count + 1);
    if (delayMs > 0)
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, delayMs);
        request.signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(request.signal!.reason);
        });
      });
    request.signal?.throwIfAborted();
    const text = answer(node, request.messages, count);
    return { text, model: 'flow-test', usage: { promptTokens: 10, completionTokens: 5 } };
  };
  const model: LanguageModel = {
    id: 'flow-test',
    modelName: 'flow-test',
    capabilities: { ...TEXT_ONLY, structuredOutput: true },
    answersFrom: 'model',
    complete,
    stream: async (request, onChunk) => {
      const completion = await complete(request);
      onChunk({ delta: completion.text });
      return completion;
    },
    embed: () => Promise.reject(new Error('no embeddings here')),
  };
  return { model, calls };
}

/** An event bus that keeps every event. */
export function recordedBus(): { bus: EventBus; events: AgentEvent[] } {
  const bus = new EventBus();
  const events: AgentEvent[] = [];
  bus.on((event) => events.push(event));
  return { bus, events };
}
