/**
 * Reading what an OpenAI-compatible server sends back: the token usage (counted with tiktoken when
 * the server reports none), tool calls whole or assembled from a stream's pieces, and embedding
 * vectors. Anything not shaped as the protocol promises is a malformed response (errors.ts).
 */
import type OpenAI from 'openai';
import { malformedResponse } from './errors.js';
import { countMessageTokens, countTokens } from './tokens.js';
import type { CompletionRequest, TokenUsage, ToolCall } from './types.js';

/**
 * The server's usage report, or a tiktoken count for `modelName` when it sends none (many local
 * servers): the messages and the offered tools' declarations in, the text and the tool calls (names
 * and arguments) out.
 */
export function completionUsage(
  modelName: string,
  reported: OpenAI.CompletionUsage | null | undefined,
  request: CompletionRequest,
  text: string,
  toolCalls: ToolCall[],
): TokenUsage {
  if (reported && typeof reported.prompt_tokens === 'number') {
    return { promptTokens: reported.prompt_tokens, completionTokens: reported.completion_tokens ?? 0 };
  }
  const count = (content: string) => (content === '' ? 0 : countTokens(modelName, content));
  const tools = request.tools && request.tools.length > 0 ? JSON.stringify(request.tools) : '';
  return {
    promptTokens: countMessageTokens(modelName, request.messages) + count(tools),
    completionTokens: toolCalls.reduce(
      (sum, call) => sum + count(call.name) + count(call.arguments),
      count(text),
    ),
  };
}

/**
 * The function calls of a whole answer's `message.tool_calls` (absent or null: none). Calls of other
 * kinds (OpenAI's custom tools, never offered here) are left out; anything not shaped like a call is a
 * malformed response.
 */
export function wholeToolCalls(value: unknown, baseUrl: string): ToolCall[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw malformedResponse(baseUrl, 'message.tool_calls is not a list');
  const calls: ToolCall[] = [];
  for (const [index, item] of value.entries()) {
    if (!isObject(item)) throw malformedResponse(baseUrl, `tool_calls[${index}] is not an object`);
    if (item.type !== undefined && item.type !== 'function') continue;
    const fn = item.function;
    if (!isObject(fn) || typeof fn.name !== 'string' || fn.name === '') {
      throw malformedResponse(baseUrl, `tool_calls[${index}] has no function name`);
    }
    calls.push({
      id: idText(item.id) || syntheticId(index),
      name: fn.name,
      arguments: argumentsText(fn.arguments, baseUrl, `tool_calls[${index}]`),
    });
  }
  return calls;
}

/** One call being assembled from a stream's pieces. */
interface PartialCall {
  /** The `index` the server gave its pieces. */
  index: number | undefined;
  id: string;
  name: string;
  /** The pieces of the arguments, joined once at the end. */
  pieces: string[];
  /** False for a call of another kind than function (OpenAI's custom tools): left out. */
  function: boolean;
}

/**
 * Assembles the tool calls of a stream from its `delta.tool_calls` pieces, as OpenAI sends them: the
 * first piece of a call has its `index`, `id` and `function.name`; later ones the same `index` and more
 * of `function.arguments`, to be concatenated. Ollama gives every call `index` 0, each whole with its
 * own `id`: a piece with a name and a new id at an index already taken is a new call (a piece without a
 * name continues the call, whatever its id: some servers send a fresh one with every piece). A piece
 * without an index goes by the latest call the same way.
 */
export class StreamedToolCalls {
  readonly #calls: PartialCall[] = [];

  constructor(private readonly baseUrl: string) {}

  /** Takes one chunk's `delta.tool_calls`. */
  add(pieces: unknown): void {
    if (!Array.isArray(pieces)) throw malformedResponse(this.baseUrl, 'delta.tool_calls is not a list');
    for (const piece of pieces) {
      if (!isObject(piece))
        throw malformedResponse(this.baseUrl, 'a delta.tool_calls piece is not an object');
      const call = this.#callFor(piece);
      if (piece.type !== undefined && piece.type !== 'function') call.function = false;
      const fn = piece.function;
      if (fn === undefined || fn === null) continue;
      if (!isObject(fn)) throw malformedResponse(this.baseUrl, 'a delta.tool_calls piece has a bad function');
      if (typeof fn.name === 'string' && fn.name !== '' && call.name === '') call.name = fn.name;
      if (fn.arguments !== undefined && fn.arguments !== null) {
        call.pieces.push(argumentsText(fn.arguments, this.baseUrl, 'a delta.tool_calls piece'));
      }
    }
  }

  /** The assembled function calls, in the order they began. */
  finish(): ToolCall[] {
    return this.#calls
      .filter((call) => call.function)
      .map((call, position) => {
        if (call.name === '') {
          throw malformedResponse(this.baseUrl, `streamed tool call ${position} has no function name`);
        }
        const joined = call.pieces.join('');
        return {
          id: call.id || syntheticId(position),
          name: call.name,
          arguments: joined === '' ? '{}' : joined,
        };
      });
  }

  #callFor(piece: Record<string, unknown>): PartialCall {
    const index = typeof piece.index === 'number' ? piece.index : undefined;
    const id = idText(piece.id);
    const latest =
      index === undefined ? this.#calls.at(-1) : this.#calls.findLast((call) => call.index === index);
    const named =
      isObject(piece.function) && typeof piece.function.name === 'string' && piece.function.name !== '';
    if (latest && (id === '' || latest.id === '' || latest.id === id || !named)) {
      if (latest.id === '') latest.id = id;
      return latest;
    }
    const call: PartialCall = { index, id, name: '', pieces: [], function: true };
    this.#calls.push(call);
    return call;
  }
}

/**
 * A call's arguments as the JSON text the server sent. Some servers (older Ollama) send an object:
 * it is written back as JSON text. Absent arguments are an empty object.
 */
function argumentsText(value: unknown, baseUrl: string, where: string): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '{}';
  if (isObject(value)) return JSON.stringify(value);
  throw malformedResponse(baseUrl, `${where} has arguments that are neither text nor an object`);
}

/** A call's id as text ('' when there is none); a few servers send numbers. */
function idText(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';
}

/** An id for a call the server sent none for (some local servers), unique within the answer. */
function syntheticId(position: number): string {
  return `call_${position}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Floats as sent, or base64 little-endian float32 from servers that encode regardless of the request. */
export function toVector(embedding: unknown, baseUrl: string): number[] {
  if (Array.isArray(embedding) && embedding.every((value) => typeof value === 'number')) return embedding;
  if (typeof embedding === 'string') {
    // Copied into a fresh buffer: Float32Array needs 4-byte alignment that pooled Buffers lack.
    const bytes = new Uint8Array(Buffer.from(embedding, 'base64'));
    if (bytes.length % 4 === 0) return Array.from(new Float32Array(bytes.buffer));
  }
  throw malformedResponse(baseUrl, 'an embedding is neither a list of numbers nor base64 float32');
}
