/**
 * Typed JSON answers: the zod schema is the contract. It is sent as `response_format: json_schema`
 * to a model that declares structured output; a server that rejects it (400) is asked with
 * `json_object`, then with plain text, and the format that worked is remembered per model. A model
 * without structured output is asked in plain text from the start. Answers are parsed (code fences
 * stripped), validated, and re-asked with the validation error (withRepair).
 */
import { z } from 'zod';
import { ModelError } from './errors.js';
import { withRepair } from './repair.js';
import type { Parsed } from './repair.js';
import type { ChatMessage, Completion, LanguageModel, ResponseFormat, TokenUsage } from './types.js';

/** How the answer's JSON shape is requested, from most to least enforced. */
export type StructuredFormat = 'json_schema' | 'json_object' | 'text';

export interface GenerateObjectOptions {
  /** Total tries when answers do not validate. Default 3. */
  tries?: number;
  /** Shown in events, traces and the error, e.g. `design: node fields`. */
  purpose?: string;
  /** The schema's name in `response_format` (letters, digits, `_`, `-`). Default `answer`. */
  name?: string;
}

export interface GeneratedObject<T> {
  object: T;
  /** The answer that validated. */
  text: string;
  attempts: number;
  usage: TokenUsage;
  /** The format the server accepted. */
  format: StructuredFormat;
}

const FALLBACK: Record<StructuredFormat, StructuredFormat | undefined> = {
  json_schema: 'json_object',
  json_object: 'text',
  text: undefined,
};

/** Model id -> the most enforced format its server accepted; a rejection is not retried later. */
const acceptedFormats = new Map<string, StructuredFormat>();

/** Asks `model` for an object matching `schema`; throws a UserError when no answer validates. */
export async function generateObject<T>(
  model: LanguageModel,
  schema: z.ZodType<T>,
  messages: ChatMessage[],
  options: GenerateObjectOptions = {},
): Promise<GeneratedObject<T>> {
  const jsonSchema = schemaFor(schema);
  const name = options.name ?? 'answer';
  let format: StructuredFormat = 'json_schema';
  const result = await withRepair({
    messages: withSchemaInstruction(messages, jsonSchema),
    tries: options.tries ?? 3,
    what: `the structured answer for ${options.purpose ?? name}`,
    parse: (text) => parseObject(text, schema),
    ask: async (conversation) => {
      const asked = await askForJson(model, name, jsonSchema, (responseFormat) =>
        model.complete({ messages: conversation, responseFormat, purpose: options.purpose }),
      );
      format = asked.format;
      return asked.completion;
    },
  });
  return { object: result.value, text: result.text, attempts: result.attempts, usage: result.usage, format };
}

/**
 * Sends a request for JSON matching `jsonSchema` in the most enforced format the model's server accepts:
 * `send` gets the response format to use (none for a model without structured output). A server that
 * rejects a format (400) is asked again in the next plainer one, and the format that worked is
 * remembered per model.
 */
export async function askForJson(
  model: LanguageModel,
  name: string,
  jsonSchema: Record<string, unknown>,
  send: (format: ResponseFormat | undefined) => Promise<Completion>,
): Promise<{ completion: Completion; format: StructuredFormat }> {
  let format: StructuredFormat =
    acceptedFormats.get(model.id) ?? (model.capabilities.structuredOutput ? 'json_schema' : 'text');
  for (;;) {
    try {
      const completion = await send(responseFormat(format, name, jsonSchema));
      acceptedFormats.set(model.id, format);
      return { completion, format };
    } catch (error) {
      const plainer = FALLBACK[format];
      if (!(error instanceof ModelError && error.kind === 'bad-request') || !plainer) throw error;
      format = plainer;
      acceptedFormats.set(model.id, format);
    }
  }
}

/** Parses an answer as JSON (inside a code fence or surrounded by prose) and validates it. */
export function parseObject<T>(text: string, schema: z.ZodType<T>): Parsed<T> {
  const json = extractJson(text);
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    return { ok: false, error: `the answer is not valid JSON (${(error as Error).message})` };
  }
  const checked = schema.safeParse(value);
  if (checked.success) return { ok: true, value: checked.data };
  return { ok: false, error: `the JSON does not match the schema: ${describeIssues(checked.error)}` };
}

/** The JSON Schema sent for `schema`, without the `$schema` key some servers refuse. */
export function schemaFor(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return rest;
}

/**
 * OpenAI's strict mode needs every object closed (`additionalProperties: false`) with every property
 * required; a schema with optional fields is sent non-strict rather than rejected.
 */
export function isStrictCompatible(node: unknown): boolean {
  if (Array.isArray(node)) return node.every(isStrictCompatible);
  if (typeof node !== 'object' || node === null) return true;
  const record = node as Record<string, unknown>;
  if (record.type === 'object' || 'properties' in record) {
    const properties = Object.keys((record.properties as Record<string, unknown> | undefined) ?? {});
    const required = new Set((record.required as string[] | undefined) ?? []);
    if (record.additionalProperties !== false || !properties.every((key) => required.has(key))) return false;
  }
  return Object.values(record).every(isStrictCompatible);
}

function responseFormat(
  format: StructuredFormat,
  name: string,
  schema: Record<string, unknown>,
): ResponseFormat | undefined {
  if (format === 'json_schema')
    return { type: 'json_schema', name, schema, strict: isStrictCompatible(schema) };
  if (format === 'json_object') return { type: 'json_object' };
  return undefined;
}

/**
 * Puts the schema in the question itself: servers on json_object or text need it, and merging into
 * the last user message keeps the user/assistant alternation some chat templates insist on.
 */
export function withSchemaInstruction(
  messages: ChatMessage[],
  schema: Record<string, unknown>,
): ChatMessage[] {
  const instruction = `Reply with one JSON object that matches this JSON Schema, and nothing else:\n${JSON.stringify(schema)}`;
  const last = messages.at(-1);
  if (last?.role === 'user') {
    return [...messages.slice(0, -1), { role: 'user', content: `${last.content}\n\n${instruction}` }];
  }
  return [...messages, { role: 'user', content: instruction }];
}

function extractJson(text: string): string {
  const fenced = /```(?:json)?\s*\n?([\s\S]*?)```/i.exec(text);
  if (fenced?.[1] !== undefined) return fenced[1].trim();
  const start = text.search(/[{[]/);
  const end = Math.max(text.lastIndexOf('}'), text.lastIndexOf(']'));
  return start >= 0 && end > start ? text.slice(start, end + 1) : text.trim();
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(root)'}: ${issue.message}`)
    .join('; ');
}
