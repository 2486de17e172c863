/**
 * What the model suites expect of a failure: a call's is a ModelError of one line, with a hint; a
 * model pull's is a UserError.
 */
import { expect } from 'vitest';
import { UserError } from '../../src/errors.js';
import { ModelError } from '../../src/llm/errors.js';

/** The failure of `call` as a one-line ModelError with a hint. */
export async function modelFailure(call: Promise<unknown>): Promise<ModelError> {
  const error = await rejection(call);
  expect(error).toBeInstanceOf(ModelError);
  const modelError = error as ModelError;
  expect(modelError.message).not.toContain('\n');
  expect(modelError.hint).toBeTruthy();
  return modelError;
}

/** What `work` rejects with, which must be a UserError. */
export async function userError(work: Promise<unknown>): Promise<UserError> {
  const error = await rejection(work);
  expect(error).toBeInstanceOf(UserError);
  return error as UserError;
}

/** What `work` rejects with; undefined when it resolves. */
function rejection(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    () => undefined,
    (reason: unknown) => reason,
  );
}
