/**
 * A client of a server's event streams (`text/event-stream`), as a browser's EventSource reads them:
 * events split at blank lines, `id:`, `event:` and `data:` fields, comment lines (keep-alives) skipped.
 */

export interface StreamedEvent {
  id?: string;
  event: string;
  /** `data:` parsed as JSON. */
  data: Record<string, unknown>;
}

/** The events of `response`'s stream, one at a time, until the server ends it. */
export async function* streamedEvents(response: Response): AsyncGenerator<StreamedEvent> {
  if (!response.ok || !response.body) throw new Error(`no event stream: ${response.status}`);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const fields = new Map<string, string>();
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).replace(/^ /, ''));
      }
      if (!fields.has('data')) continue;
      yield {
        ...(fields.has('id') && { id: fields.get('id')! }),
        event: fields.get('event') ?? 'message',
        data: JSON.parse(fields.get('data')!) as Record<string, unknown>,
      };
    }
  }
}

/** Reads `events` up to and including the first event that `until` accepts; throws if the stream ends first. */
export async function readUntil(
  events: AsyncGenerator<StreamedEvent>,
  until: (event: StreamedEvent) => boolean,
): Promise<StreamedEvent[]> {
  const read: StreamedEvent[] = [];
  for (;;) {
    const next = await events.next();
    if (next.done)
      throw new Error(`the stream ended first; it sent ${read.map((event) => event.event).join(', ')}`);
    read.push(next.value);
    if (until(next.value)) return read;
  }
}

/** Reads `events` until the server ends the stream. */
export async function readToEnd(events: AsyncGenerator<StreamedEvent>): Promise<StreamedEvent[]> {
  const read: StreamedEvent[] = [];
  for await (const event of events) read.push(event);
  return read;
}
