/**
 * Turning a goal-loop model answer into one command to run, or into a problem to send back to the
 * model. Two inputs: the seed's JSON format in the answer text, or a native tool call. Every problem
 * is written to the model: what is wrong, quoting its own words, and what to answer instead.
 */
import { closestName } from '../graph/names.js';
import type { Thoughts } from '../events.js';
import type { ToolCall } from '../llm/types.js';
import type { z } from 'zod';
import { argumentPlaceholder, checkArgs, type CommandRegistry } from '../../tools/registry.js';
import { findJsonObjects, parseJsonLenient, type JsonSpan } from './json-blocks.js';

/** A command the model chose, with arguments that passed its schema; or why none can run. */
export type ParsedAnswer =
  | { ok: true; thoughts: Thoughts; command: { name: string; args: Record<string, unknown> } }
  | { ok: false; problem: string; thoughts?: Thoughts };

/** The response format's own placeholders; a model that echoes them has not answered. */
const TEMPLATE_COMMAND = 'command name';
const TEMPLATE_ARGUMENT = 'arg name';
const TEMPLATE_THOUGHTS: Thoughts = {
  text: 'thought',
  reasoning: 'reasoning',
  plan: '- short bulleted\n- list that conveys\n- long-term plan',
  criticism: 'constructive self-criticism',
  speak: 'thoughts summary to say to user',
};

const QUOTE_LIMIT = 80;

/**
 * Parses an answer in the seed's format, `{"thoughts": {…}, "command": {"name", "args"}}`, possibly
 * inside a code fence or prose. The last complete JSON object counts (as AutoGPT forge's
 * json/parsing.py), preferring the last one with a `command` key so that a small object quoted in
 * the prose does not win over the answer.
 */
export function parseAnswer(text: string, registry: CommandRegistry): ParsedAnswer {
  const scan = findJsonObjects(text);
  if (scan.cutOff !== undefined)
    return fail(
      'Your answer was cut off before its JSON was complete (an object is never closed), probably because it was too long. Answer again with a shorter, complete JSON object; split long texts over several commands.',
      thoughtsBefore(text, scan.spans, scan.cutOff),
    );
  const candidates = scan.blocks.map((block) => ({ text: block.text, parsed: parseJsonLenient(block.text) }));
  const has = (key: string) => (candidate: (typeof candidates)[number]) =>
    candidate.parsed.ok
      ? isRecord(candidate.parsed.value) && key in candidate.parsed.value
      : new RegExp(`"${key}"\\s*:`).test(candidate.text);
  const chosen =
    candidates.findLast(has('command')) ?? candidates.findLast(has('thoughts')) ?? candidates.at(-1);
  if (!chosen)
    return fail(
      'Your answer holds no JSON object. Reply with only the JSON of the response format: {"thoughts": {…}, "command": {"name": …, "args": {…}}}.',
    );
  if (!chosen.parsed.ok)
    return fail(
      `The JSON of your answer is not valid: ${chosen.parsed.error}. Answer again with only valid JSON: double-quoted keys and strings, no comments.`,
    );
  // A block is a balanced {…}, so what parses is an object.
  const answer = chosen.parsed.value as Record<string, unknown>;
  const thoughts = 'thoughts' in answer ? normalizeThoughts(answer.thoughts) : undefined;
  if (!('command' in answer))
    return fail(
      'Your answer has no "command". Add "command": {"name": …, "args": {…}} naming one of the commands.',
      thoughts,
    );
  const command = answer.command;
  if (!isRecord(command))
    return fail(`"command" must be an object {"name": …, "args": {…}}, not ${show(command)}.`, thoughts);
  if (typeof command.name !== 'string')
    return fail(
      command.name === undefined
        ? '"command" has no "name". Name one of the commands: "command": {"name": …, "args": {…}}.'
        : `"command.name" must be a string naming one of the commands, not ${show(command.name)}.`,
      thoughts,
    );
  return checkCommand(command.name, command.args ?? {}, registry, thoughts);
}

/**
 * Parses a native tool call. Its arguments are the server's JSON text; the thoughts come from the
 * message content next to the call: the seed's `{"thoughts": {…}}` when it holds one, else the text.
 */
export function parseToolCall(call: ToolCall, content: string, registry: CommandRegistry): ParsedAnswer {
  const thoughts = thoughtsFromContent(content);
  // Some servers send an empty string for a call without arguments.
  const parsed =
    call.arguments.trim() === '' ? { ok: true as const, value: {} } : parseJsonLenient(call.arguments);
  if (!parsed.ok)
    return fail(
      `The arguments of your call to ${show(call.name)} are not valid JSON: ${parsed.error}. Call it again with one JSON object of arguments.`,
      thoughts,
    );
  return checkCommand(call.name, parsed.value, registry, thoughts);
}

/** What both forms share: placeholders, the command's name, then its arguments. */
function checkCommand(
  name: string,
  args: unknown,
  registry: CommandRegistry,
  thoughts: Thoughts | undefined,
): ParsedAnswer {
  if (name.trim().toLowerCase() === TEMPLATE_COMMAND)
    return fail(
      `You copied the response format's placeholder ${show(name)} instead of choosing a command. Fill in real values: the name of one of the commands and its arguments.`,
      thoughts,
    );
  if (isRecord(args) && TEMPLATE_ARGUMENT in args)
    return fail(
      `Your arguments copy the response format's placeholder "${TEMPLATE_ARGUMENT}". Fill in the real argument names and values of the command.`,
      thoughts,
    );
  const copied = (Object.keys(TEMPLATE_THOUGHTS) as (keyof Thoughts)[]).find(
    (field) => thoughts?.[field].trim().toLowerCase() === TEMPLATE_THOUGHTS[field].toLowerCase(),
  );
  if (thoughts && copied)
    return fail(
      `Your thoughts copy the response format's placeholder (${copied}: ${show(thoughts[copied])}). Fill in your own thoughts about the task.`,
      thoughts,
    );
  const command = registry.get(name);
  if (!command) {
    const suggestion =
      closestName(name, registry.names()) ??
      registry.all().find((known) => known.title.toLowerCase() === name.trim().toLowerCase())?.name;
    return fail(
      `There is no command ${show(name)}.${suggestion ? ` Did you mean "${suggestion}"?` : ''} The commands are: ${registry.names().join(', ')}.`,
      thoughts,
    );
  }
  if (isRecord(args)) {
    const hints = new Set(
      Object.entries(command.args.shape).flatMap(([key, schema]) => [
        `<${key}>`,
        argumentPlaceholder(key, schema as z.ZodType),
      ]),
    );
    const placeholder = Object.entries(args).find(
      ([, value]) => typeof value === 'string' && hints.has(value),
    );
    if (placeholder)
      return fail(
        `The argument "${placeholder[0]}" of ${command.name} is the placeholder ${show(placeholder[1])} from the command list. Fill in a real value.`,
        thoughts,
      );
  }
  const checked = checkArgs(command, args);
  if (!checked.ok) return fail(checked.problem, thoughts);
  return {
    ok: true,
    thoughts: thoughts ?? normalizeThoughts(undefined),
    command: { name: command.name, args: checked.args },
  };
}

/** The thoughts of a cut-off answer: they usually closed before the long argument that ran out. */
function thoughtsBefore(text: string, spans: readonly JsonSpan[], cutOff: number): Thoughts | undefined {
  const span = spans.find(
    // Only the few characters before each object matter: its key.
    (inner) =>
      inner.start > cutOff &&
      /"thoughts"\s*:\s*$/.test(text.slice(Math.max(cutOff, inner.start - 40), inner.start)),
  );
  const parsed = span && parseJsonLenient(span.text);
  return parsed?.ok ? normalizeThoughts(parsed.value) : undefined;
}

function thoughtsFromContent(content: string): Thoughts {
  const withThoughts = findJsonObjects(content)
    .blocks.map((block) => parseJsonLenient(block.text))
    .findLast((parsed) => parsed.ok && isRecord(parsed.value) && 'thoughts' in parsed.value);
  if (withThoughts?.ok) return normalizeThoughts((withThoughts.value as Record<string, unknown>).thoughts);
  return { ...normalizeThoughts(undefined), text: content.trim() };
}

/**
 * The model's thoughts as five strings, whatever it sent: absent fields are '', a list plan becomes
 * "- " lines, and thoughts sent as one string are the text.
 */
function normalizeThoughts(value: unknown): Thoughts {
  const fields = isRecord(value) ? value : { text: value };
  const field = (name: keyof Thoughts): string => {
    const raw = fields[name];
    if (Array.isArray(raw))
      return raw
        .map((item) => asText(item))
        .map((line) => (name === 'plan' ? `- ${line.replace(/^[-*]\s*/, '')}` : line))
        .join('\n');
    return asText(raw);
  };
  return {
    text: field('text'),
    reasoning: field('reasoning'),
    plan: field('plan'),
    criticism: field('criticism'),
    speak: field('speak'),
  };
}

function asText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value of the model's, shortened for a message: strings quoted, anything else as JSON. */
function show(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  const short = text.length > QUOTE_LIMIT ? `${text.slice(0, QUOTE_LIMIT - 1)}…` : text;
  return typeof value === 'string' ? JSON.stringify(short) : short;
}

function fail(problem: string, thoughts?: Thoughts): ParsedAnswer {
  return thoughts ? { ok: false, problem, thoughts } : { ok: false, problem };
}
