/**
 * tiktoken's functions, the package loaded by the first call: loading it compiles a 1 MB WebAssembly
 * module, which commands that count no tokens should not pay for. Its API is synchronous, so the package
 * is required (it is CommonJS for Node) rather than imported.
 */
import { createRequire } from 'node:module';
import type * as Tiktoken from '@dqbd/tiktoken';

let tiktoken: typeof Tiktoken | undefined;

function load(): typeof Tiktoken {
  tiktoken ??= createRequire(import.meta.url)('@dqbd/tiktoken') as typeof Tiktoken;
  return tiktoken;
}

export const get_encoding: typeof Tiktoken.get_encoding = (...args) => load().get_encoding(...args);

export const get_encoding_name_for_model: typeof Tiktoken.get_encoding_name_for_model = (...args) =>
  load().get_encoding_name_for_model(...args);
