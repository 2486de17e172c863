/**
 * Writes the fields of every node of a DOT draft with structured-output calls, run concurrently with a
 * bounded concurrency. When the draft has more nodes than calls may be in flight (a server on this
 * machine takes only a few at once), each call asks for several nodes, so the fields still take one or
 * two waves of calls whatever the size of the graph. A batch answer is judged node by node: a node it
 * missed or got wrong is asked for again alone, as is every node of a batch whose answer was unusable.
 * A node asked alone whose answer does not match its schema is sent back with the validation error
 * (generateObject's re-ask), a bounded number of times.
 */
import { isUserError } from '../src/errors.js';
import { generateObject } from '../src/llm/structured.js';
import type { ChatMessage, LanguageModel } from '../src/llm/types.js';
import { mapBounded } from '../src/map-bounded.js';
import type { DotDraft } from './dot-problems.js';
import {
  nodeBatchMessages,
  nodeBatchSchema,
  nodeBriefs,
  nodeFieldsMessages,
  nodeFieldsSchema,
  type NodeBrief,
  type NodeFields,
} from './node-fields.js';

/** How the calls run. */
export interface FieldWriting {
  model: LanguageModel;
  /** Calls in flight at once. */
  concurrency: number;
  /** Tries per node asked alone, the first included. */
  tries: number;
  /** Called after each node is written (or given up on). */
  onProgress?: (done: number, total: number) => void;
}

/** The result: fields for every node in draft order, or the reasons some nodes could not be written. */
export interface WrittenFields {
  /** `fields[i]` belongs to `draft.nodes[i]`; complete only when `failures` is empty. */
  fields: (NodeFields | null)[];
  /** One line per node whose answers never matched its schema, in draft order, e.g. `node greet: …`. */
  failures: string[];
  /**
   * What to do about the first failure, when its error said (a rate-limiting server: wait), so a design
   * that stops on it gives that advice rather than a generic one.
   */
  hint?: string;
}

/**
 * Most nodes one call asks for: the answer stays short enough for a small model to get right and for
 * a slow server to finish within the request timeout.
 */
export const MAX_NODES_PER_CALL = 5;

type Context = { description: string; outline: string };
/** A node's fields, or why it has none. */
type Written = { fields: NodeFields } | { failure: string; hint?: string };

/** Writes every node's fields. Model failures become `failures`; nothing is thrown for them. */
export async function writeNodeFields(
  draft: DotDraft,
  context: Context,
  how: FieldWriting,
): Promise<WrittenFields> {
  const briefs = nodeBriefs(draft);
  const written = new Map<string, Written>();
  const record = (id: string, result: Written): void => {
    written.set(id, result);
    how.onProgress?.(written.size, briefs.length);
  };
  const alone = async (brief: NodeBrief) => record(brief.id, await writeAlone(brief, context, how));

  await mapBounded(batches(briefs, how.concurrency), how.concurrency, async (batch) => {
    if (batch.length === 1) return alone(batch[0]!);
    for (const [id, fields] of await writeBatch(batch, context, how)) record(id, { fields });
  });
  await mapBounded(
    briefs.filter((brief) => !written.has(brief.id)),
    how.concurrency,
    alone,
  );

  const results = briefs.map((brief) => written.get(brief.id)!);
  const firstFailure = results.find((result) => 'failure' in result);
  return {
    fields: results.map((result) => ('fields' in result ? result.fields : null)),
    failures: results.flatMap((result, i) =>
      'failure' in result ? [`node ${briefs[i]!.id}: ${result.failure}`] : [],
    ),
    ...(firstFailure?.hint !== undefined && { hint: firstFailure.hint }),
  };
}

/**
 * The nodes, in draft order (neighbours share a call), split into calls: as many as may be in flight,
 * with at most MAX_NODES_PER_CALL nodes each and sizes that differ by one at most.
 */
export function batches<T>(items: readonly T[], concurrency: number): T[][] {
  const perCall = Math.min(MAX_NODES_PER_CALL, Math.max(1, Math.ceil(items.length / concurrency)));
  const calls = Math.ceil(items.length / perCall);
  const bound = (i: number) => Math.floor((i * items.length) / calls);
  return Array.from({ length: calls }, (_, i) => items.slice(bound(i), bound(i + 1)));
}

/** One node's call, with its re-asks. */
async function writeAlone(brief: NodeBrief, context: Context, how: FieldWriting): Promise<Written> {
  try {
    return { fields: await writeOne(brief, nodeFieldsMessages(brief, context), how) };
  } catch (error) {
    // Only a model's unusable answers or an unreachable server are the user's to act on; bugs propagate.
    if (!isUserError(error)) throw error;
    return { failure: error.message, ...(error.hint !== undefined && { hint: error.hint }) };
  }
}

/**
 * One call for several nodes: the fields of each node the answer got right. It is not re-asked: asking
 * its nodes alone costs the same round trip and gives each node its own re-asks.
 */
async function writeBatch(
  batch: readonly NodeBrief[],
  context: Context,
  how: FieldWriting,
): Promise<Map<string, NodeFields>> {
  const answer = await askBatch(batch, context, how);
  return new Map(
    batch.flatMap((brief) => {
      const checked = nodeFieldsSchema(brief).safeParse(answer?.[brief.id]);
      return checked.success ? [[brief.id, checked.data] as const] : [];
    }),
  );
}

/** The batch's answer as an object, or undefined when it was unusable or the call failed. */
async function askBatch(
  batch: readonly NodeBrief[],
  context: Context,
  how: FieldWriting,
): Promise<Record<string, unknown> | undefined> {
  try {
    const { object } = await generateObject(
      how.model,
      nodeBatchSchema(batch),
      nodeBatchMessages(batch, context),
      {
        tries: 1,
        purpose: `design: fields of ${batch.map((brief) => brief.id).join(', ')}`,
      },
    );
    return object;
  } catch (error) {
    // A big batch may also outlast the request timeout where one node would not: asked alone, then.
    if (!isUserError(error)) throw error;
    return undefined;
  }
}

/** One node's structured call; exported for the repair pass, which asks again with different messages. */
export async function writeOne(
  brief: NodeBrief,
  messages: ChatMessage[],
  how: Pick<FieldWriting, 'model' | 'tries'>,
): Promise<NodeFields> {
  const result = await generateObject(how.model, nodeFieldsSchema(brief), messages, {
    tries: how.tries,
    purpose: `design: fields of ${brief.id}`,
  });
  return result.object;
}
