/** What a reconnecting client of an event stream is sent: what it missed, and whether some is gone. */
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events.js';
import { EventLog } from '../../src/serve/event-log.js';

const user = (text: string): AgentEvent => ({ type: 'user', text });
const delta = (text: string): AgentEvent => ({
  type: 'model.delta',
  role: 'chatbot',
  purpose: 'node a',
  delta: text,
});

describe('EventLog', () => {
  it('replays what came after the client’s last id, and says nothing is missing', () => {
    const log = new EventLog();
    const [first] = [log.append(user('a')), log.append(user('b')), log.append(user('c'))];
    const replay = log.since(first!.id);
    expect(replay.events.map((entry) => entry.event)).toEqual([user('b'), user('c')]);
    expect(replay.gap).toBe(false);
  });

  it('gives live listeners the streaming pieces but holds none for a replay', () => {
    const log = new EventLog();
    const live: AgentEvent[] = [];
    log.subscribe((entry) => live.push(entry.event));
    const seen = log.append(user('a'));
    log.append(delta('Hel'));
    log.append(delta('lo'));
    log.append(user('b'));
    expect(live).toHaveLength(4);
    expect(log.since(seen.id)).toEqual({
      events: [expect.objectContaining({ event: user('b') })],
      gap: false,
    });
  });

  it('says there is a gap when events after the client’s id were let go', () => {
    const log = new EventLog(2);
    const seen = log.append(user('a'));
    for (const text of ['b', 'c', 'd']) log.append(user(text));
    const replay = log.since(seen.id);
    expect(replay.events.map((entry) => entry.event)).toEqual([user('c'), user('d')]);
    expect(replay.gap).toBe(true);
  });

  it('replays everything it holds to a client whose id is from another process', () => {
    const log = new EventLog();
    log.append(user('a'));
    expect(log.since('an-earlier-process-7')).toEqual({ events: [expect.anything()], gap: true });
    expect(log.since(undefined).gap).toBe(false);
  });
});
