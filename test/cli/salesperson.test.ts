/**
 * The shipped AIPL example: the seed's sales script as an autogram whose prompt gathers the prospect's
 * needs into state, run offline through the CLI with its scripted rules.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadStateFile } from '../../src/store/conversation-journal.js';
import type { AgentEvent } from '../../src/events.js';
import { runCli } from '../support/run-cli.js';

const EXAMPLE = [
  'examples/salesperson.autogram.json',
  '--provider',
  'scripted',
  '--script',
  'examples/salesperson.script.json',
];
const PROSPECT = [
  "Hi Riley, I'm Dana. Honestly it's been a long, stressful day.",
  'Go Bears! Though my power bill is what keeps me up at night.',
  'Tuesday at 10 works.',
].join('\n');

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'meta-agent-sales-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the salesperson example', () => {
  it('follows the sales script from what its template learns, and keeps what it learns in the state', async () => {
    const state = join(dir, 'sale.json');
    const result = await runCli(['chat', ...EXAMPLE, '--state', state], { input: `${PROSPECT}\n` });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('[scripted]');
    expect(result.stdout.trim().split('\n')).toEqual([
      "Hi, I'm Riley from Brightline Solar. How is your day going?",
      "I'm sorry it's been such a long day, Dana. Something lighter, then: do you follow a sports team?",
      'A Bears fan, great! Panels sized to your roof can cut that power bill for good. Could we meet on a weekday between 9:00 and 17:00 to look at your numbers? Which time suits you?',
      'Wonderful, Dana: Tuesday at 10:00 it is. Thank you, and I hope the rest of your day is calmer. Goodbye!',
    ]);
    const saved = await loadStateFile(state);
    expect(saved?.aipl?.log.map(({ name, value, turn }) => [turn, name, value])).toEqual([
      [1, 'prospect.name', 'Dana'],
      [1, 'prospect.day', 'long and stressful'],
      [2, 'prospect.team', 'the Chicago Bears'],
      [2, 'prospect.needs', 'a lower power bill'],
      [3, 'meeting.time', 'Tuesday at 10:00'],
    ]);
  });

  it('reports each turn’s model calls and what they stored on the --json stream', async () => {
    const result = await runCli(['chat', ...EXAMPLE, '--json'], { input: `${PROSPECT}\n` });
    expect(result.code).toBe(0);
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as AgentEvent);
    const phases = events.filter((event) => event.type === 'aipl.phase');
    expect(phases.map((e) => [e.label, e.turn, e.calls])).toEqual([
      ['prompt', 0, 0],
      // Four questions, then whether "long and stressful" sounds stressed.
      ['prompt', 1, 5],
      ['prompt', 2, 5],
      // The meeting question too, now that the needs are known.
      ['prompt', 3, 6],
    ]);
    expect(phases.flatMap((e) => e.stored.map((s) => s.name))).toEqual([
      'prospect.name',
      'prospect.day',
      'prospect.team',
      'prospect.needs',
      'meeting.time',
    ]);
  });
});
