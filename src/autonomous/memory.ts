/**
 * Long-term memory as runs, autograms and the `memory` command open it: a namespace under the
 * workspace's `.meta-agent/memory/` (out of reach of the agents' file commands), or, given a database
 * URL, the namespace's rows in PostgreSQL, shared by every worker; embedded by the embedder role's model. A namespace name or a namespace's files that cannot be used are user errors.
 * Code nodes reach memory through the host door (`memoryHost`), as they reach everything of the host.
 */
import { join } from 'node:path';
import { z } from 'zod';
import type { HostNamespace } from '../engine/interpreter.js';
import { UserError } from '../errors.js';
import type { LanguageModel } from '../llm/types.js';
import { namespaceFolder, namespaceProblem } from '../../memory/namespaces.js';
import type { Memory } from '../../memory/memory.js';
import { MemoryDamaged, MemoryStore } from '../../memory/store.js';
import { NamespaceBusy } from '../../memory/lock.js';
import { RESERVED_FOLDER } from '../../tools/workspace-path.js';

export function memoryRoot(workspace: string): string {
  return join(workspace, RESERVED_FOLDER, 'memory');
}

export interface MemoryLocation {
  /** The workspace folder whose memory it is (in files: without `database`). */
  workspace: string;
  /** The PostgreSQL that holds memory instead of the workspace (`--database`, META_AGENT_DATABASE_URL). */
  database?: string;
  namespace: string;
  /** The embedder role's model; memory goes by words alone when it cannot embed. */
  embedder?: LanguageModel;
  /** Told once when memory goes by words alone. */
  onNotice?: (message: string) => void;
}

/** The namespace's memory: in the database when `location` names one, else in the workspace's files. */
export async function openMemory(location: MemoryLocation): Promise<Memory> {
  const problem = namespaceProblem(location.namespace);
  if (problem) throw new UserError(`--namespace: ${problem}`, 2);
  try {
    if (location.database !== undefined) {
      const { openPostgresMemory } = await import('../../memory/postgres.js');
      return await openPostgresMemory(location.database, {
        namespace: location.namespace,
        ...(location.embedder && { embedder: location.embedder }),
        ...(location.onNotice && { onNotice: location.onNotice }),
      });
    }
    return await MemoryStore.open({
      folder: namespaceFolder(memoryRoot(location.workspace), location.namespace),
      ...(location.embedder && { embedder: location.embedder }),
      ...(location.onNotice && { onNotice: location.onNotice }),
    });
  } catch (error) {
    throw memoryUserError(error);
  }
}

/** A store's damaged files or a busy lock as the user should read them; anything else as it is. */
export function memoryUserError(error: unknown): unknown {
  if (error instanceof MemoryDamaged)
    return new UserError(
      `memory: ${error.message}`,
      2,
      'move the namespace folder aside, or use another --namespace',
    );
  if (error instanceof NamespaceBusy)
    return new UserError(`memory: the namespace is busy: ${error.message}`, 1, 'try again when it is done');
  if (error instanceof RangeError) return new UserError(`memory: ${error.message}`, 2);
  return error;
}

const DEFAULT_K = 5;
const MAX_K = 100;

const addArgs = z.tuple([
  z.string(),
  z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
    .transform((meta) => Object.fromEntries(Object.entries(meta).map(([key, value]) => [key, String(value)])))
    .optional(),
]);
const searchArgs = z.tuple([z.string(), z.number().int().min(1).max(MAX_K).optional()]);

/**
 * Memory as code nodes see it: `memory.add(text, meta?)` returns the new memory's id, and
 * `memory.search(query, k = 5)` the closest memories as plain data. The store opens on first use.
 */
export function memoryHost(opened: () => Promise<Memory>): HostNamespace {
  const call = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      const userError = memoryUserError(error);
      throw userError instanceof Error && userError !== error
        ? new Error(`memory.${name}: ${userError.message.replace(/^memory: /, '')}`)
        : error;
    }
  };
  return {
    awaited: true,
    functions: {
      add: (...args: unknown[]) =>
        call('add', async () => {
          const [text, meta] = parsed(
            'add',
            'memory.add(text, meta?) with meta an object of strings',
            addArgs,
            args,
          );
          return (await opened()).add(text, meta ?? {});
        }),
      search: (...args: unknown[]) =>
        call('search', async () => {
          const [query, k] = parsed(
            'search',
            `memory.search(query, k?) with k from 1 to ${MAX_K}`,
            searchArgs,
            args,
          );
          const hits = await (await opened()).search(query, k ?? DEFAULT_K);
          return hits.map(({ id, text, meta, at, score }) => ({ id, text, meta, at, score }));
        }),
    },
  };
}

function parsed<T>(name: string, usage: string, schema: z.ZodType<T>, args: unknown[]): T {
  const result = schema.safeParse(args);
  if (!result.success) throw new Error(`memory.${name}: call ${usage}`);
  return result.data;
}
