/**
 * An event log as a Server-Sent Events stream: `id:` the event's id (so the browser's EventSource and
 * any client can resume with `Last-Event-ID`), `event:` its type, `data:` the event as JSON. A `gap`
 * event first says that some events the client missed are no longer held. A comment line every 15
 * seconds keeps proxies from closing an idle stream.
 */
import type { Context } from 'hono';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';
import { eventJson } from '../events.js';
import type { EventLog, LoggedEvent } from './event-log.js';

const KEEP_ALIVE_MS = 15_000;

export interface StreamOptions {
  /** True for the event after which the stream ends (a goal run's `goal.ended`). */
  last?: (entry: LoggedEvent) => boolean;
  /** Ends the stream when it settles: the server is shutting down. */
  closing?: Promise<unknown>;
  /** The source has already ended: send what is held and stop. */
  ended?: boolean;
}

/** Streams `log` from the request's `Last-Event-ID` (header, or `?lastEventId=`) on. */
export function streamLog(c: Context, log: EventLog, options: StreamOptions = {}): Response {
  const lastId = c.req.header('Last-Event-ID') ?? c.req.query('lastEventId');
  return streamSSE(c, async (stream) => {
    let finish = () => {};
    const finished = new Promise<void>((resolve) => (finish = resolve));
    // Live events wait in order behind the replay, and behind each other.
    let sending = Promise.resolve();
    const send = (entry: LoggedEvent) => {
      sending = sending.then(() => write(stream, entry));
      if (options.last?.(entry)) void sending.then(finish);
    };
    const unsubscribe = log.subscribe(send);
    stream.onAbort(finish);
    void options.closing?.then(finish);
    const replay = log.since(lastId);
    if (replay.gap) sending = stream.writeSSE({ event: 'gap', data: '{}' });
    for (const entry of replay.events) send(entry);
    if (options.ended) void sending.then(finish);
    const keepAlive = setInterval(() => void stream.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
    try {
      await finished;
      await sending;
    } finally {
      clearInterval(keepAlive);
      unsubscribe();
    }
  });
}

function write(stream: SSEStreamingApi, { id, event }: LoggedEvent): Promise<void> {
  return stream.writeSSE({ id, event: event.type, data: eventJson(event) });
}
