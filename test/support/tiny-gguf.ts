/**
 * Writes a tiny GGUF model for tests: the llama architecture with RANDOM WEIGHTS, a few hundred tokens
 * and about 300 KB, so the real runtime (node-llama-cpp) can load, tokenize and generate with it in
 * milliseconds. Its answers are noise: tests that use it check the path (loading, token bias, grammar,
 * streaming, cancellation), never what it says.
 *
 * The format is GGUF v3 (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md): a header, typed
 * key/value metadata, tensor descriptions, then the tensors' data, each aligned to 32 bytes.
 */
import { writeFileSync } from 'node:fs';

const ALIGNMENT = 32;

/** Metadata value types, as GGUF numbers them. */
const ValueType = { UINT32: 4, INT32: 5, FLOAT32: 6, BOOL: 7, STRING: 8, ARRAY: 9 } as const;
type ValueType = (typeof ValueType)[keyof typeof ValueType];

/** Token types of the llama vocabulary. */
const TokenType = { NORMAL: 1, UNKNOWN: 2, CONTROL: 3, BYTE: 6 } as const;

type Value =
  | { type: typeof ValueType.UINT32 | typeof ValueType.INT32 | typeof ValueType.FLOAT32; value: number }
  | { type: typeof ValueType.BOOL; value: boolean }
  | { type: typeof ValueType.STRING; value: string }
  | { type: typeof ValueType.ARRAY; items: typeof ValueType.STRING; value: string[] }
  | {
      type: typeof ValueType.ARRAY;
      items: typeof ValueType.FLOAT32 | typeof ValueType.INT32;
      value: number[];
    };

const u32 = (value: number): Value => ({ type: ValueType.UINT32, value });
const f32 = (value: number): Value => ({ type: ValueType.FLOAT32, value });
const str = (value: string): Value => ({ type: ValueType.STRING, value });

/** Every answer label the classifier uses, so each is one token, with and without SentencePiece's space. */
const WORDS = ['Yes', 'No', ...'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'true', 'false', 'null', 'hello', 'red', 'blue'];
const SPACE = '\u2581';

/** ChatML, the template of Qwen and many other instruction-tuned models. */
const CHAT_TEMPLATE =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

interface Vocabulary {
  tokens: string[];
  scores: number[];
  types: number[];
}

/**
 * SentencePiece vocabulary: the control tokens, all 256 byte fallbacks (llama.cpp needs every one),
 * printable ASCII, then each word and every prefix of it (SentencePiece reaches a word by merging pairs
 * that are themselves in the vocabulary), scored so longer pieces win.
 */
function vocabulary(): Vocabulary {
  const entries = new Map<string, { score: number; type: number }>();
  const add = (token: string, score: number, type: number) => {
    if (!entries.has(token)) entries.set(token, { score, type });
  };
  add('<unk>', 0, TokenType.UNKNOWN);
  add('<s>', 0, TokenType.CONTROL);
  add('</s>', 0, TokenType.CONTROL);
  add('<|im_start|>', 0, TokenType.CONTROL);
  add('<|im_end|>', 0, TokenType.CONTROL);
  for (let byte = 0; byte < 256; byte++) {
    add(`<0x${byte.toString(16).toUpperCase().padStart(2, '0')}>`, 0, TokenType.BYTE);
  }
  add(SPACE, -1, TokenType.NORMAL);
  for (let code = 33; code < 127; code++) add(String.fromCharCode(code), -1, TokenType.NORMAL);
  for (const word of WORDS) {
    for (const spelling of [word, SPACE + word]) {
      for (let length = 2; length <= spelling.length; length++) {
        add(spelling.slice(0, length), length, TokenType.NORMAL);
      }
    }
  }
  const list = [...entries];
  return {
    tokens: list.map(([token]) => token),
    scores: list.map(([, entry]) => entry.score),
    types: list.map(([, entry]) => entry.type),
  };
}

/** Mulberry32: seeded, so every test run writes the same weights. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Tensor {
  name: string;
  /** GGUF order: the first dimension is the contiguous one. */
  shape: number[];
  data: Float32Array;
}

export interface TinyModelOptions {
  /** Default 1. */
  seed?: number;
  /** Default 2. */
  layers?: number;
}

/** Writes the model to `path` and returns its size in bytes. */
export function writeTinyGguf(path: string, options: TinyModelOptions = {}): number {
  const bytes = tinyGguf(options);
  writeFileSync(path, bytes);
  return bytes.length;
}

/** The bytes of the tiny model. */
export function tinyGguf(options: TinyModelOptions = {}): Buffer {
  const embedding = 32;
  const heads = 4;
  const feedForward = 64;
  const layers = options.layers ?? 2;
  const vocab = vocabulary();
  const next = random(options.seed ?? 1);
  const weights = (...shape: number[]) => {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    const scale = 1 / Math.sqrt(shape[0]!);
    for (let index = 0; index < data.length; index++) data[index] = (next() * 2 - 1) * scale;
    return data;
  };
  const ones = (length: number) => new Float32Array(length).fill(1);
  const vocabSize = vocab.tokens.length;
  const tensors: Tensor[] = [
    { name: 'token_embd.weight', shape: [embedding, vocabSize], data: weights(embedding, vocabSize) },
    { name: 'output_norm.weight', shape: [embedding], data: ones(embedding) },
    { name: 'output.weight', shape: [embedding, vocabSize], data: weights(embedding, vocabSize) },
  ];
  for (let layer = 0; layer < layers; layer++) {
    const block = (name: string, ...shape: number[]) =>
      tensors.push({ name: `blk.${layer}.${name}.weight`, shape, data: weights(...shape) });
    tensors.push({ name: `blk.${layer}.attn_norm.weight`, shape: [embedding], data: ones(embedding) });
    block('attn_q', embedding, embedding);
    block('attn_k', embedding, embedding);
    block('attn_v', embedding, embedding);
    block('attn_output', embedding, embedding);
    tensors.push({ name: `blk.${layer}.ffn_norm.weight`, shape: [embedding], data: ones(embedding) });
    block('ffn_gate', embedding, feedForward);
    block('ffn_up', embedding, feedForward);
    block('ffn_down', feedForward, embedding);
  }
  const id = (token: string) => vocab.tokens.indexOf(token);
  const metadata: [string, Value][] = [
    ['general.architecture', str('llama')],
    ['general.name', str('meta-agent tiny test model (random weights)')],
    ['general.file_type', u32(0)],
    ['general.alignment', u32(ALIGNMENT)],
    ['llama.context_length', u32(2048)],
    ['llama.embedding_length', u32(embedding)],
    ['llama.block_count', u32(layers)],
    ['llama.feed_forward_length', u32(feedForward)],
    ['llama.attention.head_count', u32(heads)],
    ['llama.attention.head_count_kv', u32(heads)],
    ['llama.attention.layer_norm_rms_epsilon', f32(1e-5)],
    ['llama.rope.dimension_count', u32(embedding / heads)],
    ['llama.vocab_size', u32(vocabSize)],
    ['tokenizer.ggml.model', str('llama')],
    ['tokenizer.ggml.tokens', { type: ValueType.ARRAY, items: ValueType.STRING, value: vocab.tokens }],
    ['tokenizer.ggml.scores', { type: ValueType.ARRAY, items: ValueType.FLOAT32, value: vocab.scores }],
    ['tokenizer.ggml.token_type', { type: ValueType.ARRAY, items: ValueType.INT32, value: vocab.types }],
    ['tokenizer.ggml.unknown_token_id', u32(id('<unk>'))],
    ['tokenizer.ggml.bos_token_id', u32(id('<s>'))],
    ['tokenizer.ggml.eos_token_id', u32(id('<|im_end|>'))],
    ['tokenizer.ggml.add_bos_token', { type: ValueType.BOOL, value: false }],
    ['tokenizer.chat_template', str(CHAT_TEMPLATE)],
  ];
  return encode(metadata, tensors);
}

function encode(metadata: [string, Value][], tensors: Tensor[]): Buffer {
  const parts: Buffer[] = [];
  const uint32 = (value: number) => {
    const buffer = Buffer.alloc(4);
    buffer.writeUInt32LE(value);
    parts.push(buffer);
  };
  const uint64 = (value: number) => {
    const buffer = Buffer.alloc(8);
    buffer.writeBigUInt64LE(BigInt(value));
    parts.push(buffer);
  };
  const string = (value: string) => {
    const bytes = Buffer.from(value, 'utf8');
    uint64(bytes.length);
    parts.push(bytes);
  };
  const scalar = (type: ValueType, value: number | boolean | string) => {
    const buffer = Buffer.alloc(4);
    if (type === ValueType.STRING) return string(value as string);
    if (type === ValueType.BOOL) return parts.push(Buffer.from([value ? 1 : 0]));
    if (type === ValueType.UINT32) buffer.writeUInt32LE(value as number);
    else if (type === ValueType.INT32) buffer.writeInt32LE(value as number);
    else buffer.writeFloatLE(value as number);
    parts.push(buffer);
  };

  parts.push(Buffer.from('GGUF', 'ascii'));
  uint32(3);
  uint64(tensors.length);
  uint64(metadata.length);
  for (const [key, value] of metadata) {
    string(key);
    uint32(value.type);
    if (value.type === ValueType.ARRAY) {
      uint32(value.items);
      uint64(value.value.length);
      for (const item of value.value) scalar(value.items, item);
    } else scalar(value.type, value.value);
  }
  let offset = 0;
  const offsets = tensors.map((tensor) => {
    const start = offset;
    offset = aligned(offset + tensor.data.byteLength);
    return start;
  });
  tensors.forEach((tensor, index) => {
    string(tensor.name);
    uint32(tensor.shape.length);
    for (const dimension of tensor.shape) uint64(dimension);
    uint32(0); // F32
    uint64(offsets[index]!);
  });
  const header = Buffer.concat(parts);
  const data = Buffer.alloc(offset);
  tensors.forEach((tensor, index) => {
    Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength).copy(
      data,
      offsets[index],
    );
  });
  return Buffer.concat([header, Buffer.alloc(aligned(header.length) - header.length), data]);
}

function aligned(length: number): number {
  return Math.ceil(length / ALIGNMENT) * ALIGNMENT;
}
