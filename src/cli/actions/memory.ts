/** What `meta-agent memory …` does (declared in ../commands/memory.ts). */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { text as readStream } from 'node:stream/consumers';
import { memoryUserError, openMemory } from '../../autonomous/memory.js';
import { UserError, isUserError } from '../../errors.js';
import type { LanguageModel } from '../../llm/types.js';
import type { Memory } from '../../../memory/memory.js';
import { SHARED_NAMESPACE, namespaceProblem } from '../../../memory/namespaces.js';
import { EMBED_BATCH } from '../../../memory/store.js';
import { databaseUrl } from '../database.js';
import { interruptOnSigint } from '../interrupt.js';
import { hitLines, listLine, statsLines } from '../memory-lines.js';
import { parseImport, readImport, type ImportEntry } from '../memory-import.js';
import { hasModelFlags, modelsFromOptions } from '../model-options.js';
import type { ModelOptionValues } from '../options.js';
import { writeErr, writeOut } from '../terminal.js';
import { plural } from '../words.js';

/** What every memory subcommand takes. */
export interface MemoryOptions {
  namespace: string;
  workspace?: string;
  /** PostgreSQL instead of the workspace's files (else META_AGENT_DATABASE_URL). */
  database?: string;
}

/** Options of the subcommands that embed, and so take the model options. */
export type MemoryModelOptions = MemoryOptions & ModelOptionValues;

export interface MemoryAddOptions extends MemoryModelOptions {
  meta?: Record<string, string>;
}

export interface MemorySearchOptions extends MemoryModelOptions {
  limit: number;
  json?: boolean;
}

export interface MemoryListOptions extends MemoryOptions {
  limit?: number;
  json?: boolean;
}

export interface MemoryForgetOptions extends MemoryOptions {
  match?: string;
  json?: boolean;
}

export interface MemoryImportOptions extends MemoryModelOptions {
  json?: boolean;
}

export interface MemoryStatsOptions extends MemoryModelOptions {
  json?: boolean;
}

/** An import or reindex of at least this many memories reports progress even when stderr is not a terminal. */
const LONG_JOB = 1000;

/** The embedder role's model, or why there is none (memory then goes by words alone). */
type EmbedderChoice = { embedder: LanguageModel } | { missing: string };

/**
 * Where a command's memory is: the checked namespace, and the database's URL or else the workspace's
 * absolute path.
 */
interface Location {
  namespace: string;
  workspace: string;
  database?: string;
}

export async function addMemory(words: string[], options: MemoryAddOptions): Promise<void> {
  const location = await locate(options);
  const fromStdin = words.length === 1 && words[0] === '-';
  if (fromStdin && process.stdin.isTTY)
    writeErr('note: reading the memory from the terminal; end it with Ctrl+D\n');
  const text = fromStdin ? (await readStream(process.stdin)).trimEnd() : words.join(' ');
  if (text.trim() === '')
    throw new UserError(
      'the memory is empty',
      2,
      'give its text: meta-agent memory add "…" (or - to read stdin)',
    );
  const choice = await chooseEmbedder(options);
  const id = await withStore(location, choice, (store) => store.add(text, options.meta ?? {}));
  writeOut(`${id}\n`);
}

export async function searchMemory(words: string[], options: MemorySearchOptions): Promise<void> {
  const location = await locate(options);
  const query = words.join(' ');
  if (query.trim() === '')
    throw new UserError('the query is empty', 2, 'meta-agent memory search "what to find"');
  const choice = await chooseEmbedder(options);
  const { found: hits, namespaces } = await withStore(location, choice, (store) =>
    withNamespaces(store, store.search(query, options.limit)),
  );
  if (options.json) return void writeOut(`${JSON.stringify(hits, null, 2)}\n`);
  if (hits.length === 0)
    return noteNothing(location, namespaces, `no memory in the namespace "${location.namespace}" matches`);
  writeOut(`${hits.map((hit) => hitLines(hit, terminalWidth()).join('\n')).join('\n\n')}\n`);
}

export async function listMemory(options: MemoryListOptions): Promise<void> {
  const location = await locate(options);
  const { found: all, namespaces } = await withStore(location, undefined, (store) =>
    withNamespaces(store, store.list()),
  );
  const items = options.limit === undefined ? all : all.slice(-options.limit);
  if (options.json) return void writeOut(`${JSON.stringify(items, null, 2)}\n`);
  if (items.length === 0)
    return noteNothing(location, namespaces, `the namespace "${location.namespace}" holds no memories`);
  const width = terminalWidth();
  writeOut(items.map((item) => `${listLine(item, width)}\n`).join(''));
}

/**
 * Forgets by id or by --match. Ids are checked first and an unknown one forgets nothing (exit 2), so a
 * mistyped id cannot leave half the list forgotten; --match that matches nothing exits 1, as grep does.
 */
export async function forgetMemory(ids: string[], options: MemoryForgetOptions): Promise<void> {
  const { match } = options;
  if (ids.length > 0 && match !== undefined) throw new UserError('give ids or --match, not both', 2);
  if (ids.length === 0 && match === undefined)
    throw new UserError(
      'nothing to forget',
      2,
      'give ids (meta-agent memory list shows them) or --match TEXT',
    );
  if (match !== undefined && match.trim() === '')
    throw new UserError('--match needs some text', 2, 'an empty text would match every memory');
  const location = await locate(options);
  const forgotten = await withStore(location, undefined, async (store) => {
    if (match !== undefined) return store.forgetMatching(match);
    const known = new Set((await store.list()).map((item) => item.id));
    const unknown = ids.filter((id) => !known.has(id));
    if (unknown.length > 0)
      throw new UserError(
        `the namespace "${location.namespace}" has no memory with the id ${unknown.join(', ')}; nothing was forgotten`,
        2,
        `meta-agent memory list${namespaceFlag(location)} shows the ids`,
      );
    return store.forget(ids);
  });
  if (match !== undefined && forgotten.length === 0)
    throw new UserError(`no memory in the namespace "${location.namespace}" contains "${match}"`, 1);
  if (options.json) return void writeOut(`${JSON.stringify({ forgotten })}\n`);
  writeOut(`forgot ${memories(forgotten.length)}: ${forgotten.join(', ')}\n`);
}

export async function importMemory(file: string, options: MemoryImportOptions): Promise<void> {
  const location = await locate(options);
  if (file === '-' && process.stdin.isTTY)
    writeErr('note: reading memories from the terminal, one a line; end with Ctrl+D\n');
  const source = file === '-' ? 'stdin' : file;
  const { format, entries } = parseImport(await readImport(file), source);
  const choice = await chooseEmbedder(options);
  const interrupt = interruptOnSigint();
  const ids: string[] = [];
  try {
    await withStore(location, choice, async (store) => {
      const progress = progressReporter('importing');
      try {
        for (let start = 0; start < entries.length && !interrupt.signal.aborted; start += EMBED_BATCH) {
          const batch = entries.slice(start, start + EMBED_BATCH);
          ids.push(...(await addUnlessInterrupted(store, batch, interrupt.signal)));
          progress.update(ids.length, entries.length);
        }
      } finally {
        progress.end();
      }
    });
  } finally {
    interrupt.dispose();
  }
  if (interrupt.signal.aborted) throw interrupted(file, entries, ids.length);
  if (options.json) return void writeOut(`${JSON.stringify({ imported: ids.length, format, ids })}\n`);
  const shape = format === 'jsonl' ? 'JSONL' : 'one a line';
  writeOut(`imported ${memories(ids.length)} from ${source} (${shape}) into "${location.namespace}"\n`);
}

export async function reindexMemory(options: MemoryModelOptions): Promise<void> {
  const location = await locate(options);
  // Reindexing is embedding: without a model server there is nothing to do, so its error stands.
  const { models } = await modelsFromOptions(options, undefined, { embeddedFallback: false });
  const choice = { embedder: models.embedder };
  const interrupt = interruptOnSigint();
  const progress = progressReporter('re-embedding');
  try {
    const { count, stats } = await withStore(location, choice, async (store) => {
      const count = await store.reindex(interrupt.signal, progress.update);
      return { count, stats: await store.stats() };
    });
    const shape = stats.dimensions === undefined ? '' : ` (${plural(stats.dimensions, 'dimension')})`;
    writeOut(
      `re-embedded ${stats.embedded} of ${memories(count)} with ${models.embedder.modelName}${shape}\n`,
    );
  } catch (error) {
    if (interrupt.signal.aborted)
      throw new UserError('reindex interrupted; the namespace is as it was before', 130);
    throw error;
  } finally {
    progress.end();
    interrupt.dispose();
  }
}

export async function memoryStats(options: MemoryStatsOptions): Promise<void> {
  const location = await locate(options);
  const choice = await chooseEmbedder(options);
  const { stats, namespaces } = await withStore(location, choice, async (store) => ({
    stats: await store.stats(),
    namespaces: await store.namespaces(),
  }));
  const embedder = 'embedder' in choice ? { model: choice.embedder.modelName } : choice;
  if (options.json)
    return void writeOut(
      `${JSON.stringify({ namespace: location.namespace, ...stats, embedder, namespaces }, null, 2)}\n`,
    );
  writeOut(`${statsLines(stats, { namespace: location.namespace, namespaces, embedder }).join('\n')}\n`);
}

/** The namespace, checked before anything slow, the database's URL when there is one, and the workspace folder. */
async function locate(options: MemoryOptions): Promise<Location> {
  const problem = namespaceProblem(options.namespace);
  if (problem) throw new UserError(`--namespace: ${problem}`, 2);
  const database = databaseUrl(options.database);
  const workspace = resolve(options.workspace ?? 'workspace');
  if (database !== undefined) return { namespace: options.namespace, workspace, database };
  const found = await stat(workspace).catch(() => undefined);
  if (found && !found.isDirectory())
    throw new UserError(`--workspace: ${workspace} is a file, not a folder`, 2);
  return { namespace: options.namespace, workspace };
}

/**
 * The embedder the model options, the environment or a local server give. When none can be resolved
 * and no model flag asked for one, memory still works, by words: the reason is told with the store's
 * words-only note.
 */
async function chooseEmbedder(options: ModelOptionValues): Promise<EmbedderChoice> {
  try {
    return {
      embedder: (await modelsFromOptions(options, undefined, { embeddedFallback: false })).models.embedder,
    };
  } catch (error) {
    if (!isUserError(error) || hasModelFlags(options)) throw error;
    return { missing: error.message };
  }
}

/** Opens the namespace, runs `work`, and closes it (saving its index when due); store errors as user errors. */
async function withStore<T>(
  location: Location,
  choice: EmbedderChoice | undefined,
  work: (store: Memory) => Promise<T>,
): Promise<T> {
  const store = await openMemory({
    ...location,
    ...(choice && 'embedder' in choice && { embedder: choice.embedder }),
    onNotice: noticeWriter(choice),
  });
  let result: T;
  try {
    result = await work(store);
  } catch (error) {
    await store.close().catch(() => undefined);
    throw memoryUserError(error);
  }
  try {
    await store.close();
  } catch (error) {
    throw memoryUserError(error);
  }
  return result;
}

/** Writes the store's notes to stderr; the first is followed by why there is no embedder, if so. */
function noticeWriter(choice: EmbedderChoice | undefined): (message: string) => void {
  let explained = false;
  return (message) => {
    writeErr(`note: ${message}\n`);
    if (choice && 'missing' in choice && !explained) {
      explained = true;
      writeErr(`note: ${choice.missing}\n`);
    }
  };
}

/** Adds one batch; an interruption while it is embedded adds none of it and ends the import. */
async function addUnlessInterrupted(
  store: Memory,
  batch: ImportEntry[],
  signal: AbortSignal,
): Promise<string[]> {
  try {
    return await store.addMany(
      batch.map(({ text, meta }) => ({ text, meta })),
      signal,
    );
  } catch (error) {
    if (signal.aborted) return [];
    throw error;
  }
}

function interrupted(file: string, entries: ImportEntry[], done: number): UserError {
  const next = entries[done]?.line;
  const rest =
    next !== undefined && file !== '-'
      ? `the rest starts at line ${next}: tail -n +${next} ${file} | meta-agent memory import - (with the same options)`
      : undefined;
  return new UserError(`import interrupted: ${memories(done)} of ${entries.length} imported`, 130, rest);
}

/**
 * Progress on stderr: one line rewritten in a terminal; elsewhere, for a long job only, a line per
 * tenth done.
 */
function progressReporter(label: string): { update: (done: number, total: number) => void; end: () => void } {
  const tty = process.stderr.isTTY === true;
  let shown = false;
  let tenths = 0;
  return {
    update: (done, total) => {
      if (tty) {
        shown = true;
        // Our own text, written as is: writeErr would escape the carriage return that rewrites the line.
        process.stderr.write(`\r${label} ${done} of ${total}…`);
      } else if (total >= LONG_JOB && Math.floor((done * 10) / total) > tenths) {
        tenths = Math.floor((done * 10) / total);
        writeErr(`${label} ${done} of ${total}\n`);
      }
    },
    end: () => {
      if (shown) process.stderr.write('\r\u001b[K');
    },
  };
}

/** What `work` found, and the namespaces beside the store's when it found nothing (for noteNothing). */
async function withNamespaces<T>(
  store: Memory,
  work: Promise<T[]>,
): Promise<{ found: T[]; namespaces: string[] }> {
  const found = await work;
  return { found, namespaces: found.length === 0 ? await store.namespaces() : [] };
}

/** Says on stderr that there is nothing, and which namespaces there are when this one does not exist. */
function noteNothing(location: Location, namespaces: string[], message: string): void {
  const where = location.database === undefined ? location.workspace : 'the database';
  const others = namespaces.includes(location.namespace)
    ? ''
    : namespaces.length === 0
      ? ` (${where} holds no memories yet)`
      : ` (namespaces here: ${namespaces.join(', ')})`;
  writeErr(`note: ${message}${others}\n`);
}

function namespaceFlag(location: Location): string {
  return location.namespace === SHARED_NAMESPACE ? '' : ` --namespace ${location.namespace}`;
}

function memories(n: number): string {
  return n === 1 ? '1 memory' : `${n} memories`;
}

function terminalWidth(): number | undefined {
  return process.stdout.isTTY ? process.stdout.columns : undefined;
}
