/** Shared by the sandbox suites: a node to blame, and the SandboxError a failing call rejects with. */
import { expect } from 'vitest';
import { SandboxError } from '../../src/sandbox/index.js';

export const where = { node: 'calc' };

/** Awaits `work`, expects it to fail with a SandboxError, and returns that error. */
export async function failure(work: Promise<unknown>): Promise<SandboxError> {
  const error = await work.then(
    (value) => new Error(`expected a SandboxError, got the value ${JSON.stringify(value)}`),
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(SandboxError);
  return error as SandboxError;
}
