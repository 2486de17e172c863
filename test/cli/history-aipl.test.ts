import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newState, saveState } from '../../src/engine/state.js';
import { graphFileSchema } from '../../src/graph/schema.js';
import { VersionedGraph } from '../../src/graph/versioned.js';
import { runCli } from '../support/run-cli.js';

/** A conversation on an AIPL graph that was never edited: an AIPL log and no graph history. */
const AIPL_STATE = 'test/fixtures/history-aipl/tutor-aipl.state.json';
/** A conversation with neither. */
const PLAIN_STATE = 'test/fixtures/history-aipl/plain.state.json';

const AIPL_TABLE = [
  `AIPL log (${AIPL_STATE}): 4 entries, turn 2`,
  'turn  name          value                                     question',
  '   1  student.name  Sam                                       What is the student called?',
  '   1  student.mood  curious                                   How does the student feel?',
  '   1  student.goal  to add and compare fractions with unlik…  What does the student want to reach?',
  '   2  student.mood  tired ⏎ but trying                        How does the student feel?',
].join('\n');

/** A self-edited conversation that also has an AIPL log, saved the way `chat --state` saves it. */
function editedAiplState(): string {
  const graph = new VersionedGraph(
    graphFileSchema.parse({
      name: 'tutor',
      nodes: [{ name: 'ask', action: 'chat', instruction: 'Ask a question', transitions: ['ask'] }],
      config: { aipl: {} },
    }),
  );
  graph.apply({ op: 'add', node: { name: 'hint', action: 'chat', transitions: ['ask'] } }, { by: 'self' });
  const aipl = { turn: 1, log: [{ name: 'student.name', value: 'Sam', turn: 1, question: 'Name?' }] };
  const path = join(mkdtempSync(join(tmpdir(), 'meta-agent-history-aipl-')), 'chat-state.json');
  writeFileSync(path, saveState({ ...newState(graph), aipl, graph: graph.toJSON() }));
  return path;
}

describe('meta-agent history and the AIPL log', () => {
  it('lists every entry of the log, oldest first, when the state holds no graph history', async () => {
    const { code, stdout, stderr } = await runCli(['history', AIPL_STATE]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toBe(`${AIPL_TABLE}\n`);
  });

  it('prints the log after the versions table when the state holds both', async () => {
    const path = editedAiplState();
    const { code, stdout } = await runCli(['history', path]);
    expect(code).toBe(0);
    const [versions, log] = stdout.trimEnd().split('\n\n');
    expect(versions).toContain(`tutor (${path}): version 1, 2 nodes`);
    expect(versions).toMatch(/\n\s+1\s+\S+\s+self\s+add\s+hint$/);
    expect(log).toBe(
      [
        `AIPL log (${path}): 1 entry, turn 1`,
        'turn  name          value  question',
        '   1  student.name  Sam    Name?',
      ].join('\n'),
    );
  });

  it('prints only the log with --aipl, and the log as JSON with --aipl --json', async () => {
    const path = editedAiplState();
    expect((await runCli(['history', path, '--aipl'])).stdout).not.toContain('version');
    expect((await runCli(['history', AIPL_STATE, '--aipl'])).stdout).toBe(`${AIPL_TABLE}\n`);
    const { code, stdout } = await runCli(['history', AIPL_STATE, '--aipl', '--json']);
    expect(code).toBe(0);
    const saved = JSON.parse(readFileSync(AIPL_STATE, 'utf8')) as { aipl: { log: unknown[] } };
    // Values whole, line breaks and all.
    expect(JSON.parse(stdout)).toEqual(saved.aipl.log);
  });

  it('refuses a state with neither a graph history nor an AIPL log (exit 2)', async () => {
    const { code, stderr } = await runCli(['history', PLAIN_STATE]);
    expect(code).toBe(2);
    expect(stderr).toContain(
      `${PLAIN_STATE}: this conversation state holds no graph history (its graph was not edited) and no AIPL log`,
    );
  });

  it('refuses --aipl where there is no log, and --json without --aipl', async () => {
    expect(await runCli(['history', PLAIN_STATE, '--aipl'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('this conversation state holds no AIPL log'),
    });
    expect(await runCli(['history', 'test/fixtures/graphs/simple_example.csv', '--aipl'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('is a graph, not a conversation state'),
    });
    expect(await runCli(['history', AIPL_STATE, '--json'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--json is only used with --aipl'),
    });
    expect(await runCli(['history', AIPL_STATE, '--aipl', '--diff', '0', '1'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('give it without --diff or --revert'),
    });
  });

  it('still says a state without graph history has no versions to diff', async () => {
    expect(await runCli(['history', AIPL_STATE, '--diff', '0', '1'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('holds no graph history'),
    });
  });

  it('shows --aipl in --help with its examples', async () => {
    const { stdout } = await runCli(['history', '--help']);
    expect(stdout).toContain('--aipl');
    expect(stdout).toContain('meta-agent history chat-state.json --aipl --json');
  });
});
