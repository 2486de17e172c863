/** What `meta-agent aipl check` and `aipl render` do (declared in ../commands/aipl.ts). */
import { readFile } from 'node:fs/promises';
import { buffer as readStream } from 'node:stream/consumers';
import type { Template } from '../../aipl/ast.js';
import { STATE_NAME } from '../../aipl/names.js';
import { outlineTemplate, type TemplateOutline } from '../../aipl/outline.js';
import { AiplSyntaxError, parseTemplate } from '../../aipl/parse.js';
import { AiplCache, DEFAULT_AIPL_SETTINGS, renderWithModel, type PhaseResult } from '../../aipl/phase.js';
import { clockSpecials } from '../../aipl/render.js';
import { copyAiplState, newAiplState, type AiplState } from '../../aipl/state.js';
import { variablesInScope } from '../../engine/frames.js';
import { conversationMessages, historyWindow } from '../../engine/prompt.js';
import { nameTable } from '../../engine/tables.js';
import { UserError } from '../../errors.js';
import { withoutBom } from '../../graph/json-syntax.js';
import { graphConfigSchema } from '../../graph/schema.js';
import {
  TEXT_ONLY,
  type ChatMessage,
  type CompletionRequest,
  type LanguageModel,
  type ModelSet,
} from '../../llm/types.js';
import { hasModelFlags, modelsFromOptions } from '../model-options.js';
import type { ModelOptionValues } from '../options.js';
import { isStateText, replay } from '../../store/conversation-journal.js';
import { writeErr, writeOut } from '../terminal.js';
import { plural } from '../words.js';

/** `aipl check`'s options as commander parses them. */
export interface AiplCheckOptions {
  json?: boolean;
}

/** `aipl render`'s options as commander parses them. */
export interface AiplRenderOptions extends ModelOptionValues {
  state?: string;
  /** `--set` values by name, in the order given (a later one wins). */
  set?: [name: string, value: string][];
  char: string;
  user: string;
  now?: Date;
  json?: boolean;
}

/** One file's result, as `check --json` prints it: an outline when it parses, where it fails when not. */
type CheckReport = { file: string } & (
  ({ ok: true } & TemplateOutline) | { ok: false; error: { line: number; column: number; problem: string } }
);

/** Parses every file, prints what each does or where it fails; exit code 1 when one does not parse. */
export async function runAiplCheck(files: string[], options: AiplCheckOptions): Promise<void> {
  if (files.filter((file) => file === '-').length > 1)
    throw new UserError('stdin is read once: pass - only once', 2);
  // Every file is read before anything is printed: a path mistyped is fixed first, not found midway.
  const templates = [];
  for (const file of files) templates.push({ name: shownName(file), source: await readText(file) });
  const checked = templates.map(({ name, source }) => check(name, source));
  if (options.json)
    writeOut(
      `${JSON.stringify(
        checked.map(({ report }) => report),
        null,
        2,
      )}\n`,
    );
  else for (const { shown } of checked) writeOut(shown);
  process.exitCode = checked.every(({ report }) => report.ok) ? 0 : 1;
}

/** One template's report, and the same in words. */
function check(file: string, source: string): { report: CheckReport; shown: string } {
  try {
    const outline = outlineTemplate(parseTemplate(source, file));
    return { report: { file, ok: true, ...outline }, shown: describeOutline(file, outline) };
  } catch (error) {
    if (!(error instanceof AiplSyntaxError)) throw error;
    const { line, column } = error.at;
    return {
      report: { file, ok: false, error: { line, column, problem: error.problem } },
      shown: `${error.message}\n${error.excerpt}\n`,
    };
  }
}

/**
 * `FILE: ok, 2 updates, 1 block, 4 references`, then a line for each of reads, writes and soft functions
 * that is not empty.
 */
function describeOutline(file: string, outline: TemplateOutline): string {
  const counts = [
    plural(outline.updates, 'update'),
    plural(outline.blocks, 'block'),
    plural(outline.references, 'reference'),
  ];
  const lists: [string, string[]][] = [
    ['reads', outline.reads],
    ['writes', outline.writes],
    ['soft functions', outline.softFunctions],
  ];
  const details = lists
    .filter(([, names]) => names.length > 0)
    .map(([label, names]) => `  ${label}: ${names.join(', ')}\n`);
  return `${file}: ok, ${counts.join(', ')}\n${details.join('')}`;
}

/** What a render starts from: the AIPL state, the autogram's variables and the conversation. */
interface Start {
  aipl: AiplState;
  vars: Record<string, unknown>;
  conversation: ChatMessage[];
}

function emptyStart(): Start {
  return { aipl: newAiplState(), vars: nameTable(), conversation: [] };
}

/** Runs the template's model-update phase and prints what it renders; writes no file. */
export async function runAiplRender(file: string, options: AiplRenderOptions): Promise<void> {
  const name = shownName(file);
  const source = await readText(file);
  let template: Template;
  try {
    template = parseTemplate(source, name);
  } catch (error) {
    if (!(error instanceof AiplSyntaxError)) throw error;
    // As check shows it: the excerpt's caret lines up only below a line of its own.
    writeErr(`error: ${error.message}\n${error.excerpt}\n`);
    process.exitCode = error.exitCode;
    return;
  }
  const start = options.state === undefined ? emptyStart() : await readStart(options.state);
  for (const [key, value] of options.set ?? []) setValue(start, key, value);
  const clock = clockSpecials(options.now ?? new Date());
  const phase = (models: Pick<ModelSet, 'chatbot' | 'classifier'>): Promise<PhaseResult> =>
    renderWithModel({
      template,
      // A copy, so a phase that stops for want of a model leaves the start as it was for the next.
      state: copyAiplState(start.aipl),
      vars: start.vars,
      names: { char: options.char, user: options.user, assistant: options.char },
      clock,
      conversation: start.conversation,
      models,
      settings: DEFAULT_AIPL_SETTINGS,
      cache: new AiplCache(),
      label: name,
    });

  // Model options given are the user's choice, checked now; without them a model is only looked for
  // (the environment, a local server) once the template asks one something.
  let models = hasModelFlags(options) ? (await modelsFromOptions(options)).models : undefined;
  let result: PhaseResult;
  try {
    result = await phase(models ?? { chatbot: NO_MODEL, classifier: NO_MODEL });
  } catch (error) {
    if (!(error instanceof ModelNeeded)) throw error;
    models = await modelsFor(name, error.what, options);
    result = await phase(models);
  }
  const scripted = models?.chatbot.answersFrom === 'rules';
  // As the engine reads a prompt: a line left blank at either end by a construct is no part of it.
  const text = result.text.trim();
  if (options.json) {
    const { stored, calls, cached, ms } = result;
    writeOut(`${JSON.stringify({ text, stored, calls, cached, ms, scripted })}\n`);
    return;
  }
  writeOut(`${text}\n`);
  writeErr(`${summary(result, scripted)}\n`);
}

/** `[aipl] 2 model calls (scripted), 0 answers cached, 3 ms; stored prospect.name = "Dana"`. */
function summary(result: PhaseResult, scripted: boolean): string {
  const calls = `${plural(result.calls, 'model call')}${scripted ? ' (scripted)' : ''}`;
  const stored =
    result.stored.length === 0
      ? 'nothing stored'
      : `stored ${result.stored.map((entry) => `${entry.name} = ${JSON.stringify(entry.value)}`).join(', ')}`;
  return `[aipl] ${calls}, ${plural(result.cached, 'answer')} cached, ${result.ms} ms; ${stored}`;
}

/** Thrown by the stand-in model: the template asks a model something, and none was looked for yet. */
class ModelNeeded extends Error {
  constructor(
    /** What was asked: a question, a soft function's call, a value to read. */
    readonly what: string,
  ) {
    super(`a model is needed for ${what}`);
  }
}

function refuse(request: CompletionRequest): Promise<never> {
  // The phase names each call by what it asks: `aipl: What is the user's name?`.
  return Promise.reject(new ModelNeeded(request.purpose?.replace(/^aipl: /, '') ?? 'a model call'));
}

/** The model a render without model options starts with: any call to it ends the attempt. */
const NO_MODEL: LanguageModel = {
  id: 'none',
  modelName: 'none',
  capabilities: TEXT_ONLY,
  answersFrom: 'model',
  complete: refuse,
  stream: refuse,
  embed: () => Promise.reject(new ModelNeeded('embeddings')),
};

/** The models, now that the template needs them; when none can be found, the error says what needed one. */
async function modelsFor(name: string, what: string, options: AiplRenderOptions): Promise<ModelSet> {
  try {
    return (await modelsFromOptions(options)).models;
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    const asked = what.length > 80 ? `${what.slice(0, 80)}…` : what;
    throw new UserError(
      `${name} needs a model to answer ${asked}: ${error.message}`,
      2,
      'pass --model NAME (with --base-url URL for a local server), run `meta-agent models pull` for the embedded model, or --provider scripted --script FILE for answers from a rules file',
    );
  }
}

/**
 * What `--state PATH` holds: a conversation saved by `chat --state` (its AIPL state, its variables, and
 * its messages to answer update questions from) or a JSON file of values.
 */
async function readStart(path: string): Promise<Start> {
  const text = await readText(path);
  if (isStateText(text)) {
    const state = replay(text, path);
    return {
      aipl: state.aipl ?? newAiplState(),
      // A copy: `--set vars.NAME=…` writes to it, and the table in scope may be the state's own.
      vars: Object.assign(Object.create(null) as Record<string, unknown>, variablesInScope(state)),
      // The graph is not known here, so its history window is the default one.
      conversation: conversationMessages(state, historyWindow(graphConfigSchema.parse({}))),
    };
  }
  const start = emptyStart();
  for (const [name, value] of valuesIn(text, path)) setValue(start, name, value);
  return start;
}

/** The shapes of a values file. */
const VALUES = '{"ns.key": "value"} or {"ns": {"key": "value"}}, values as strings';
const VALUES_SHAPE = `a values file is ${VALUES}`;

/** The `[ns.key, value]` pairs of a values file, in its order; anything but strings is refused, by name. */
function valuesIn(text: string, path: string): [string, string][] {
  let json: unknown;
  try {
    json = JSON.parse(withoutBom(text));
  } catch (error) {
    throw new UserError(
      `${path} is neither a conversation state nor JSON: ${(error as Error).message}`,
      2,
      `pass a conversation saved by meta-agent chat --state, or a JSON file of values: ${VALUES}`,
    );
  }
  if (!isTable(json))
    throw new UserError(`${path} holds ${kindOf(json)}, not an object of values`, 2, VALUES_SHAPE);
  const pairs: [string, string][] = [];
  for (const [outer, value] of Object.entries(json)) {
    if (outer.includes('.')) pairs.push(checkedValue(outer, value, path));
    else if (isTable(value))
      for (const [key, inner] of Object.entries(value))
        pairs.push(checkedValue(`${outer}.${key}`, inner, path));
    else
      throw new UserError(
        `${path}: "${outer}" holds ${kindOf(value)}; a namespace holds an object of values`,
        2,
        VALUES_SHAPE,
      );
  }
  return pairs;
}

/** `[name, value]` once the name is one AIPL can read and the value a string. */
function checkedValue(name: string, value: unknown, path: string): [string, string] {
  if (!STATE_NAME.test(name))
    throw new UserError(
      `${path}: "${name}" is not a name like ns.key (letters, digits and _)`,
      2,
      VALUES_SHAPE,
    );
  if (typeof value !== 'string')
    throw new UserError(`${path}: ${name} is ${kindOf(value)}; values are strings`, 2, VALUES_SHAPE);
  return [name, value];
}

function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A JSON value's kind in words: `a number (41)`, `an array`, `null`. */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value} (${JSON.stringify(value)})`;
}

/** Sets `ns.key` (a state value, stored last so it wins) or `vars.name` (an autogram variable). */
function setValue(start: Start, name: string, value: string): void {
  const [namespace, key] = name.split('.') as [string, string];
  if (namespace.toLowerCase() === 'vars') start.vars[key] = value;
  else start.aipl.log.push({ name: name.toLowerCase(), value, turn: start.aipl.turn, question: '' });
}

/** How a file is named in messages: stdin for `-`. */
function shownName(file: string): string {
  return file === '-' ? 'stdin' : file;
}

/** A file's text (stdin for `-`), UTF-8 with any byte order mark removed; refused plainly when it cannot be. */
async function readText(path: string): Promise<string> {
  let bytes: Buffer;
  if (path === '-') {
    if (process.stdin.isTTY) writeErr('note: reading the template from the terminal; end it with Ctrl+D\n');
    bytes = await readStream(process.stdin);
  } else {
    try {
      bytes = await readFile(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw new UserError(`${path}: no such file`, 2);
      if (code === 'EISDIR') throw new UserError(`${path}: is a folder, not a file`, 2);
      throw new UserError(`${path}: cannot read: ${(error as Error).message}`, 2);
    }
  }
  try {
    // The decoder drops a leading byte order mark, as some Windows editors write one.
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new UserError(`${shownName(path)}: is not UTF-8 text`, 2);
  }
}
