/**
 * The openai SDK, loaded when the first request to a server is about to be made. It is some 240 modules
 * and over 100 ms of start-up, which commands that never call a model (validate, show, `call` on a graph
 * of code, a scripted chat) should not pay.
 */
import type * as Sdk from 'openai';

/** The SDK's module. */
export type OpenAISdk = typeof Sdk;

let sdk: OpenAISdk | undefined;

/** The SDK, loaded on the first call. */
export async function loadOpenAISdk(): Promise<OpenAISdk> {
  sdk ??= await import('openai');
  return sdk;
}

/** The SDK if something has loaded it. Until then no error can be one the SDK threw. */
export function loadedOpenAISdk(): OpenAISdk | undefined {
  return sdk;
}

/**
 * Client options that keep the SDK's own log lines (its warnings, "Could not parse message into JSON")
 * off the terminal, where only our one-line error belongs. OPENAI_LOG still turns them on, to debug.
 */
export function quietSdkLog(): { logLevel?: 'off' } {
  return process.env.OPENAI_LOG ? {} : { logLevel: 'off' };
}
