/**
 * `node:crypto`, loaded on first use: its some 25 modules cost a command's start 6 to 15 ms to compile,
 * and most commands need it late or never (a random id, a hash). A type import loads nothing.
 */
import type * as crypto from 'node:crypto';

export function nodeCrypto(): typeof crypto {
  return process.getBuiltinModule('node:crypto');
}
