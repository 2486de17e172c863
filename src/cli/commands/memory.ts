/**
 * `meta-agent memory`: the long-term memory runs and autograms keep, from the command line: add,
 * search, list, forget, import, reindex and stats, each in one namespace of one workspace.
 */
import { InvalidArgumentError } from 'commander';
import type { Command } from 'commander';
import { SHARED_NAMESPACE } from '../../../memory/namespaces.js';
import type {
  MemoryAddOptions,
  MemoryForgetOptions,
  MemoryImportOptions,
  MemoryListOptions,
  MemoryModelOptions,
  MemorySearchOptions,
  MemoryStatsOptions,
} from '../actions/memory.js';
import {
  DATABASE_OPTION_HELP,
  MODEL_OPTIONS_HELP,
  addDatabaseOption,
  addModelOptions,
  positiveInteger,
} from '../options.js';

const WHERE = `
Memories live in WORKSPACE/.meta-agent/memory/NAMESPACE: -w picks the workspace (default ./workspace,
as for run), -n the namespace (default shared), a folder name of lowercase letters, digits, ".", "_"
and "-". Search goes by meaning (vectors of the embedding model: --embedder-model, else
META_AGENT_EMBEDDER_MODEL, else text-embedding-3-small on OpenAI or an embedding model a local server
lists) and by words together. With no model server, or another embedding model than the memories
were embedded with, it goes by words alone and a note on stderr says so; \`memory reindex\` embeds
them again with the model of now. With --database (or META_AGENT_DATABASE_URL) memories live in
PostgreSQL instead, namespaces shared by every machine that names it, -w aside; the server needs the
pgvector extension.`;

const EXAMPLES = `
Examples:
  $ meta-agent memory add "The deploy key lives in the vault under ops/deploy"
  $ meta-agent memory search "where is the deploy key"
  $ meta-agent memory list --limit 20
  $ meta-agent memory forget 3f2a9c01d2e4
  $ meta-agent memory forget --match "deploy key"
  $ meta-agent memory import notes.txt --namespace notes     one memory a line, or JSONL
  $ meta-agent memory stats                                  sizes, model, and every namespace
  $ meta-agent memory reindex --embedder-model nomic-embed-text
  $ meta-agent memory import notes.txt --database postgres://me@db.internal/agents
${WHERE}
${DATABASE_OPTION_HELP}`;

/** Registers `memory` and its subcommands. */
export function register(program: Command): void {
  const memory = program
    .command('memory')
    .description('add, search, list and forget long-term memories (what runs and autograms remember)')
    .addHelpText('after', EXAMPLES);

  withModels(
    located(memory.command('add'))
      .description('remember a text; prints its id')
      .argument('<text...>', 'the memory (words are joined by spaces; - reads it from stdin)')
      .option('--meta <key=value>', 'a label kept with it (repeatable)', metaPair),
    `
Examples:
  $ meta-agent memory add "Maria prefers tea over coffee"
  $ meta-agent memory add "Release 2.4 ships on Friday" --meta source=standup --meta team=web
  $ git log -1 --format=%B | meta-agent memory add - --namespace changes`,
  ).action(async (words: string[], options: MemoryAddOptions) => {
    const { addMemory } = await import('../actions/memory.js');
    await addMemory(words, options);
  });

  withModels(
    located(memory.command('search'))
      .description('the memories closest to a query, by meaning and by words')
      .argument('<query...>', 'what to look for (words are joined by spaces)')
      .option('-k, --limit <n>', 'how many to show', positiveInteger, 5)
      .option('--json', 'print the hits as a JSON array (id, text, meta, at, score, similarity, via)'),
    `
Examples:
  $ meta-agent memory search "what does Maria drink"
  $ meta-agent memory search deploy key -k 10
  $ meta-agent memory search "release date" --json | jq -r '.[0].text'

Each hit shows its id, its score (1 is the first of both rankings), what found it (meaning, words) and
its text. A memory naming an identifier of the query verbatim (ZX-9921, v2.4, camelCase) comes first.`,
  ).action(async (words: string[], options: MemorySearchOptions) => {
    const { searchMemory } = await import('../actions/memory.js');
    await searchMemory(words, options);
  });

  located(memory.command('list'))
    .description('every memory, oldest first: id, date and first line')
    .option('--limit <n>', 'only the N most recent', positiveInteger)
    .option('--json', 'print them as a JSON array (id, text, meta, at, embedded)')
    .addHelpText(
      'after',
      `
Examples:
  $ meta-agent memory list
  $ meta-agent memory list --limit 10 --namespace notes
  $ meta-agent memory list --json | jq length`,
    )
    .action(async (options: MemoryListOptions) => {
      const { listMemory } = await import('../actions/memory.js');
      await listMemory(options);
    });

  located(memory.command('forget'))
    .description('forget memories by id, or every one containing a text')
    .argument('[ids...]', 'ids, as list and search show them')
    .option('--match <text>', 'forget every memory whose text contains TEXT (any case)')
    .option('--json', 'print the forgotten ids as JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ meta-agent memory forget 3f2a9c01d2e4 9b8e77a0c1d2
  $ meta-agent memory forget --match "old phone number"

Give ids or --match, not both. When an id is unknown nothing is forgotten (exit 2), so a typo cannot
leave half the work done; --match that matches nothing exits 1.`,
    )
    .action(async (ids: string[], options: MemoryForgetOptions) => {
      const { forgetMemory } = await import('../actions/memory.js');
      await forgetMemory(ids, options);
    });

  withModels(
    located(memory.command('import'))
      .description('add every memory of a file: one a line, or JSONL ({"text": …, "meta": {…}})')
      .argument('<file>', 'a text file, or - for stdin')
      .option('--json', 'print the new ids as JSON'),
    `
Examples:
  $ meta-agent memory import facts.txt
  $ meta-agent memory import notes.jsonl --namespace notes
  $ grep -h TODO *.md | meta-agent memory import -

A file is JSONL when every line that is not blank is a JSON object with a string "text" (and, if it
likes, a "meta" object of labels); otherwise each line that is not blank is one memory. A line that
starts with "{" must be valid JSON. Progress goes to stderr; Ctrl+C stops between batches and keeps
what was imported.`,
  ).action(async (file: string, options: MemoryImportOptions) => {
    const { importMemory } = await import('../actions/memory.js');
    await importMemory(file, options);
  });

  withModels(
    located(memory.command('reindex')).description(
      'embed every memory again with the embedding model of now (after changing it)',
    ),
    `
Examples:
  $ meta-agent memory reindex
  $ meta-agent memory reindex --base-url http://127.0.0.1:11434/v1 --embedder-model nomic-embed-text

Vectors of one model cannot be compared with another's, so after a change of embedding model memory
searches by words alone until it is reindexed. It needs a model server; Ctrl+C leaves the namespace as
it was.`,
  ).action(async (options: MemoryModelOptions) => {
    const { reindexMemory } = await import('../actions/memory.js');
    await reindexMemory(options);
  });

  withModels(
    located(memory.command('stats'))
      .description('how much a namespace holds, its model, sizes, and every namespace of the workspace')
      .option('--json', 'print them as a JSON object'),
    `
Examples:
  $ meta-agent memory stats
  $ meta-agent memory stats --namespace notes --json`,
  ).action(async (options: MemoryStatsOptions) => {
    const { memoryStats } = await import('../actions/memory.js');
    await memoryStats(options);
  });
}

/** Adds where the memory is: --namespace, --workspace and --database. */
function located(command: Command): Command {
  return addDatabaseOption(
    command
      .option('-n, --namespace <name>', 'the namespace', SHARED_NAMESPACE)
      .option('-w, --workspace <dir>', 'the workspace whose memory it is (default ./workspace)'),
  );
}

/** Adds the model options (the embedder is the one used) and the help, model help last. */
function withModels(command: Command, examples: string): Command {
  return addModelOptions(command).addHelpText('after', `${examples}\n${MODEL_OPTIONS_HELP}`);
}

/** Parses a repeatable `--meta key=value` into one record. */
function metaPair(value: string, previous: Record<string, string> | undefined): Record<string, string> {
  const at = value.indexOf('=');
  const key = value.slice(0, at).trim();
  if (at < 0 || key === '') throw new InvalidArgumentError('expected key=value, e.g. source=standup');
  return { ...previous, [key]: value.slice(at + 1) };
}
