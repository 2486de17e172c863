/** What the model suites expect of every failed call: a ModelError of one line, with a hint. */
import { expect } from 'vitest';
import { ModelError } from '../../src/llm/errors.js';

/** The failure of `call` as a one-line ModelError with a hint. */
export async function modelFailure(call: Promise<unknown>): Promise<ModelError> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ModelError);
  const modelError = error as ModelError;
  expect(modelError.message).not.toContain('\n');
  expect(modelError.hint).toBeTruthy();
  return modelError;
}
