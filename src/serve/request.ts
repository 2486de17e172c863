/** Reading what a request sends: its JSON body against a schema, and the ids it names. */
import type { Context } from 'hono';
import type { z } from 'zod';
import { CATALOG_ID } from '../store/catalog.js';
import { ApiError } from './errors.js';

/** The body as `schema` says, or a 400 that names the field at fault. */
export async function readBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  let json: unknown;
  try {
    json = await c.req.json();
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError(400, 'the request body is not JSON', 'invalid_json');
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const param = issue.path.join('.');
  throw new ApiError(400, `${param || 'the body'}: ${issue.message}`, 'invalid_request', param || undefined);
}

/** A conversation id a client chose: it names a file in the default store, so its characters are few. */
export function checkedId(id: string): string {
  if (!CATALOG_ID.test(id))
    throw new ApiError(
      400,
      'a conversation id is 1 to 128 letters, digits, ".", "_" or "-", not starting with "."',
      'invalid_conversation_id',
    );
  return id;
}
