/**
 * The scripted provider (`--provider scripted --script FILE`): deterministic answers from a JSON file of
 * rules, for tests, demos and offline runs. It is never chosen by default, and every output that shows
 * its text must say it is scripted (`answersFrom: 'rules'`). It takes no tools, labels or response
 * formats: its rules answer what they say.
 *
 * ```json
 * { "rules": [ { "role": "classifier", "match": "/happy/i", "reply": "A" },
 *              { "match": "weather", "reply": ["Sunny.", "Still sunny."] } ],
 *   "default": "I have no scripted answer for that." }
 * ```
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { UserError } from '../errors.js';
import { nodeCrypto } from '../lazy-crypto.js';
import { countMessageTokens, countTokens } from './tokens.js';
import type {
  ChatMessage,
  Completion,
  CompletionChunk,
  CompletionRequest,
  Embeddings,
  LanguageModel,
  ModelRole,
  ModelSet,
} from './types.js';
import { ROLES, TEXT_ONLY } from './types.js';

const scriptSchema = z.strictObject({
  rules: z.array(
    z.strictObject({
      role: z.enum(ROLES).optional(),
      match: z.string().optional(),
      reply: z.union([z.string(), z.array(z.string()).min(1)]),
    }),
  ),
  default: z.string().optional(),
});

/** The script file's shape. */
export type ScriptFile = z.infer<typeof scriptSchema>;

/** Dimensions of the scripted embedder's vectors. */
export const SCRIPTED_EMBEDDING_DIMENSIONS = 256;

interface CompiledRule {
  role: ModelRole | undefined;
  matches: (prompt: string) => boolean;
  replies: string[];
  /** How many times this rule has answered; an array reply advances with it. */
  used: number;
}

/**
 * A loaded script. The models of one run share it, so an array reply advances across roles in the
 * order the calls happen.
 */
export class Script {
  readonly #rules: CompiledRule[];
  readonly #defaultReply: string | undefined;

  constructor(
    file: ScriptFile,
    /** Where the script came from, for messages. */
    readonly source: string,
  ) {
    this.#rules = file.rules.map((rule, index) => ({
      role: rule.role,
      matches: compileMatch(rule.match, source, index),
      replies: typeof rule.reply === 'string' ? [rule.reply] : rule.reply,
      used: 0,
    }));
    this.#defaultReply = file.default;
  }

  /** The reply for `prompt` asked of `role`: the first matching rule wins, then the default. */
  reply(role: ModelRole, prompt: string): string {
    const rule = this.#rules.find(
      (candidate) => (candidate.role ?? role) === role && candidate.matches(prompt),
    );
    if (rule) {
      const text = rule.replies[Math.min(rule.used, rule.replies.length - 1)] ?? '';
      rule.used += 1;
      return text;
    }
    if (this.#defaultReply !== undefined) return this.#defaultReply;
    throw new UserError(
      `the script ${this.source} has no rule for the ${role} prompt "${promptStart(prompt)}"`,
      1,
      'add a rule whose "match" fits this prompt, or a "default" reply',
    );
  }
}

/** Reads and validates a script file; a missing or malformed file is a UserError naming the path. */
export async function loadScript(path: string): Promise<Script> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : String(error);
    throw new UserError(`cannot read the script ${path}: ${reason}`, 2, 'pass an existing file to --script');
  }
  let json: unknown;
  try {
    // A byte order mark (some Windows editors write one) is not part of the JSON.
    json = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new UserError(`the script ${path} is not valid JSON: ${(error as Error).message}`, 2);
  }
  const parsed = scriptSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? issue.path.join('.') : 'top level';
    throw new UserError(
      `the script ${path} is invalid at ${where}: ${issue?.message ?? 'unexpected shape'}`,
      2,
      'expected { "rules": [ { "role"?, "match"?, "reply": "text" | ["text", …] } ], "default"?: "text" }',
    );
  }
  return new Script(parsed.data, path);
}

/** A LanguageModel answering one role from a script. */
export class ScriptedModel implements LanguageModel {
  readonly id: string;
  readonly modelName: string = 'scripted';
  readonly capabilities = TEXT_ONLY;
  readonly answersFrom = 'rules';

  constructor(
    readonly script: Script,
    readonly role: ModelRole,
  ) {
    this.id = `scripted:${script.source}`;
  }

  async complete(request: CompletionRequest): Promise<Completion> {
    request.signal?.throwIfAborted();
    const text = this.script.reply(this.role, joinPrompt(request.messages));
    return {
      text,
      model: this.modelName,
      usage: {
        promptTokens: countMessageTokens(this.modelName, request.messages),
        completionTokens: countTokens(this.modelName, text),
      },
    };
  }

  async stream(request: CompletionRequest, onChunk: (chunk: CompletionChunk) => void): Promise<Completion> {
    const completion = await this.complete(request);
    // Word by word, so consumers of deltas see a stream like a real server's.
    for (const piece of completion.text.match(/\s*\S+\s*/g) ?? []) onChunk({ delta: piece });
    return completion;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Embeddings> {
    signal?.throwIfAborted();
    return {
      vectors: texts.map(hashEmbedding),
      model: this.modelName,
      usage: {
        promptTokens: texts.reduce((sum, text) => sum + countTokens(this.modelName, text), 0),
        completionTokens: 0,
      },
    };
  }
}

/** One scripted model per role, all sharing the script loaded from `path`. */
export async function createScriptedModels(path: string): Promise<ModelSet> {
  const script = await loadScript(path);
  return {
    chatbot: new ScriptedModel(script, 'chatbot'),
    classifier: new ScriptedModel(script, 'classifier'),
    userbot: new ScriptedModel(script, 'userbot'),
    embedder: new ScriptedModel(script, 'embedder'),
  };
}

/**
 * A deterministic unit vector: hashed bag of words, so texts that share words are close, which is
 * enough for memory and retrieval tests to behave sensibly offline.
 */
export function hashEmbedding(text: string): number[] {
  const vector = new Array<number>(SCRIPTED_EMBEDDING_DIMENSIONS).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const digest = nodeCrypto().createHash('sha256').update(word).digest();
    const index = digest.readUInt16BE(0) % SCRIPTED_EMBEDDING_DIMENSIONS;
    vector[index] = (vector[index] ?? 0) + ((digest[2] ?? 0) & 1 ? 1 : -1);
  }
  const norm = Math.hypot(...vector);
  return norm === 0 ? vector : vector.map((value) => value / norm);
}

function compileMatch(match: string | undefined, source: string, index: number): (prompt: string) => boolean {
  if (match === undefined) return () => true;
  const regex = /^\/(.+)\/([a-z]*)$/s.exec(match);
  if (!regex) return (prompt) => prompt.includes(match);
  try {
    const pattern = new RegExp(regex[1] ?? '', regex[2]);
    return (prompt) => {
      pattern.lastIndex = 0;
      return pattern.test(prompt);
    };
  } catch (error) {
    throw new UserError(
      `the script ${source} has an invalid regular expression in rules.${index}.match: ${(error as Error).message}`,
      2,
    );
  }
}

function joinPrompt(messages: readonly ChatMessage[]): string {
  return messages.map((message) => message.content).join('\n\n');
}

function promptStart(prompt: string): string {
  const flat = prompt.replace(/\s+/g, ' ').trim();
  return flat.length > 80 ? `${flat.slice(0, 80)}…` : flat;
}
