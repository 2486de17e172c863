/**
 * Writes the fields of every node of a DOT draft: one structured-output call per node, all independent,
 * run concurrently with a bounded concurrency. An answer that does not match the node's schema is sent
 * back with the validation error (generateObject's re-ask), a bounded number of times.
 */
import { isUserError } from '../src/errors.js';
import { generateObject } from '../src/llm/structured.js';
import type { ChatMessage, LanguageModel } from '../src/llm/types.js';
import { mapBounded } from './concurrency.js';
import {
  nodeBriefs,
  nodeFieldsMessages,
  nodeFieldsSchema,
  type DotDraft,
  type NodeBrief,
  type NodeFields,
} from './node-fields.js';

/** How the per-node calls run. */
export interface FieldWriting {
  model: LanguageModel;
  /** Calls in flight at once. */
  concurrency: number;
  /** Tries per node, the first included. */
  tries: number;
  /** Called after each node is written (or given up on). */
  onProgress?: (done: number, total: number) => void;
}

/** The result: fields for every node in draft order, or the reasons some nodes could not be written. */
export interface WrittenFields {
  /** `fields[i]` belongs to `draft.nodes[i]`; complete only when `failures` is empty. */
  fields: (NodeFields | null)[];
  /** One line per node whose answers never matched its schema, e.g. `node greet: …`. */
  failures: string[];
}

/** Writes every node's fields concurrently. Model failures become `failures`; nothing is thrown for them. */
export async function writeNodeFields(
  draft: DotDraft,
  context: { description: string; outline: string },
  how: FieldWriting,
): Promise<WrittenFields> {
  const briefs = nodeBriefs(draft);
  let done = 0;
  const failures: string[] = [];
  const fields = await mapBounded(briefs, how.concurrency, async (brief) => {
    try {
      return await writeOne(brief, nodeFieldsMessages(brief, context), how);
    } catch (error) {
      // Only a model's unusable answers or an unreachable server are the user's to act on; bugs propagate.
      if (!isUserError(error)) throw error;
      failures.push(`node ${brief.id}: ${error.message}`);
      return null;
    } finally {
      how.onProgress?.(++done, briefs.length);
    }
  });
  return { fields, failures };
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
