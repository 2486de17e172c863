/**
 * What names a turn on Postgres, so that a request sent again (a client's retry, to this server or
 * another) is known for the same turn and gets its recorded reply:
 *
 * - the history the client sent back and the message it adds, when it sent a history (OpenAI clients
 *   resend the conversation with every request);
 * - else its `Idempotency-Key` header (the same on each retry, as Stripe's and OpenAI's clients send it)
 *   with the message, so a client's first message is safe to retry too;
 * - else what the server recorded last and the message: a client that sends only its new message and
 *   no key cannot be told from one that says the same thing again, so such a request is a new turn.
 *
 * Each is a digest of text that holds the owner (history.ts begins a history with the owner and graph).
 */
import { createHash } from 'node:crypto';

/** The turn that adds `text` (undefined: the agent's opening turn) to the history of digest `seen`. */
export function requestAfter(seen: string, text: string | undefined): string {
  return digest(`${seen}\0${text === undefined ? 'opening' : `user\0${text}`}`);
}

/** The turn of `owner`'s request with idempotency key `key`, adding `text`. */
export function requestKeyed(owner: string, key: string, text: string): string {
  return digest(`key\0${owner}\0${key}\0${text}`);
}

/** The id of the conversation `owner`'s request with idempotency key `key` starts (so its retry finds it). */
export function conversationKeyed(owner: string, key: string): string {
  return `conv_${digest(`conversation\0${owner}\0${key}`).slice(0, 22)}`;
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}
