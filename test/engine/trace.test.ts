import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Interpreter } from '../../src/engine/interpreter.js';
import { attachTrace } from '../../src/engine/trace.js';
import { EventBus } from '../../src/events.js';
import { fixture, noModels } from '../support/agents.js';

describe('the trace file', () => {
  it('appends every event of a run as one JSON line, in order', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'meta-agent-trace-'));
    const file = join(dir, 'run.jsonl');
    const events = new EventBus();
    const detach = attachTrace(events, file);
    const agent = await Interpreter.create({ graph: fixture('tally'), models: noModels, events });
    try {
      const first = await agent.reply(undefined);
      await agent.reply('hi', first.state);
    } finally {
      agent.dispose();
      detach();
      events.emit({ type: 'user', text: 'after detaching' });
    }
    const lines = (await readFile(file, 'utf8')).trimEnd().split('\n');
    const parsed = lines.map((line) => JSON.parse(line) as { type: string; time: string });
    expect(parsed.map((e) => e.type)).toEqual([
      // First reply: count = 0, call listen(0), which asks.
      'run.started',
      'transition',
      'node.entered',
      'variable.set',
      'transition',
      'node.entered',
      'transition',
      'node.entered',
      'reply',
      // Second reply, the same run: bump, return into count, back round the loop, ask again.
      'user',
      'transition',
      'node.entered',
      'transition',
      'variable.set',
      'transition',
      'node.entered',
      'transition',
      'node.entered',
      'transition',
      'node.entered',
      'reply',
    ]);
    expect(parsed.every((e) => !Number.isNaN(Date.parse(e.time)))).toBe(true);
    await rm(dir, { recursive: true, force: true });
  });
});
