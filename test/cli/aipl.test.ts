/**
 * `meta-agent aipl check` and `aipl render` through the built CLI, against the templates, values, rules
 * and conversation in test/fixtures/aipl (sales.state.jsonl is a journal saved by `chat --state`).
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli, type RunCliOptions } from '../support/run-cli.js';

const fixtures = fileURLToPath(new URL('../fixtures/aipl/', import.meta.url));

/** No model server anywhere: nothing configured, and the local ports probed refuse at once. */
const NO_SERVER = { META_AGENT_PROBE_URLS: 'http://127.0.0.1:9/v1' };

function aipl(args: string[], options: RunCliOptions = {}) {
  return runCli(['aipl', ...args], { cwd: fixtures, ...options, env: { ...NO_SERVER, ...options.env } });
}

const SCRIPTED = ['--provider', 'scripted', '--script', 'sales.script.json'];
const NOW = ['--now', '2025-03-14T15:30'];

describe('meta-agent aipl check', () => {
  it('says what a template does: its updates, blocks, references, names read and written, soft functions', async () => {
    const result = await aipl(['check', 'sales.aipl']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        'sales.aipl: ok, 1 update, 2 blocks, 8 references',
        '  reads: prospect.name, prospect.company, prospect.notes',
        '  writes: prospect.name',
        '  soft functions: isInterestedInDemo',
        '',
      ].join('\n'),
    );
  });

  it('shows where a template does not parse, line and column with a caret, and exits 1', async () => {
    const result = await aipl(['check', 'greeting.aipl', 'broken.aipl']);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('greeting.aipl: ok, 0 updates, 1 block, 7 references\n');
    expect(result.stdout).toMatch(
      /broken\.aipl:4:30: .+\n4 \| \(= "Where does \{user\} work\?" prospect\.company\)\n {2}\| {30}\^\n$/,
    );
  });

  it('prints one JSON array of reports with --json', async () => {
    const result = await aipl(['check', 'sales.aipl', 'broken.aipl', '--json']);
    expect(result.code).toBe(1);
    const [sales, broken] = JSON.parse(result.stdout) as Record<string, unknown>[];
    expect(sales).toEqual({
      file: 'sales.aipl',
      ok: true,
      updates: 1,
      blocks: 2,
      references: 8,
      reads: ['prospect.name', 'prospect.company', 'prospect.notes'],
      writes: ['prospect.name'],
      softFunctions: ['isInterestedInDemo'],
    });
    expect(broken).toMatchObject({ file: 'broken.aipl', ok: false, error: { line: 4, column: 30 } });
    expect((broken!.error as { problem: string }).problem).toContain('->');
  });

  it('reads a template from stdin for -, a byte order mark dropped', async () => {
    const result = await aipl(['check', '-'], { input: '\uFEFF((deal.closed\nThank {user}.\n)\n' });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('stdin: ok, 0 updates, 1 block, 2 references\n  reads: deal.closed\n');
  });

  it('refuses a missing file, a folder or a file that is not UTF-8 text in one line, exit 2', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'aipl-check-'));
    await writeFile(join(dir, 'latin1.aipl'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    for (const [file, message] of [
      ['missing.aipl', 'error: missing.aipl: no such file\n'],
      [dir, `error: ${dir}: is a folder, not a file\n`],
      [join(dir, 'latin1.aipl'), `error: ${join(dir, 'latin1.aipl')}: is not UTF-8 text\n`],
    ]) {
      const result = await aipl(['check', 'sales.aipl', file!]);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(message);
      expect(result.stdout).toBe('');
    }
  });
});

describe('meta-agent aipl render', () => {
  it('renders from a values file and --set with no model configured', async () => {
    const result = await aipl([
      'render',
      'greeting.aipl',
      '--state',
      'values.json',
      '--set',
      'Prospect.Stage=demo',
      ...NOW,
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      'You are Agent, talking to User on Friday, March 14, 2025 at 15:30.\nBook the demo for Dana.\nThe topic is pricing.\n',
    );
    expect(result.stderr).toMatch(/^\[aipl\] 0 model calls, 0 answers cached, \d+ ms; nothing stored\n$/);
  });

  it('prints the result as JSON with --json; --set vars.name sets a variable, and names come from --char and --user', async () => {
    const result = await aipl([
      'render',
      'greeting.aipl',
      '--set',
      'vars.topic=support',
      '--char',
      'Ava',
      '--user',
      'Sam',
      '--now',
      '2025-03-14',
      '--json',
    ]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({
      text: 'You are Ava, talking to Sam on Friday, March 14, 2025 at 00:00.\nThe topic is support.',
      stored: [],
      calls: 0,
      cached: 0,
      ms: expect.any(Number),
      scripted: false,
    });
  });

  it('asks a scripted model for a soft function, and says the answers are scripted', async () => {
    const result = await aipl(['render', 'sales.aipl', '--state', 'values.json', ...SCRIPTED, ...NOW]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        'You are Agent, a sales assistant for Acme Robotics, talking to User.',
        'It is 15:30 on Friday, March 14, 2025.',
        'Address the prospect as Dana.',
        'They work at a company we do not know yet.',
        'Offer a demo slot this week.',
        '',
      ].join('\n'),
    );
    // Without a conversation there is no user message to answer the update's question from.
    expect(result.stderr).toMatch(
      /^\[aipl\] 1 model call \(scripted\), 0 answers cached, \d+ ms; nothing stored\n$/,
    );
  });

  it('answers update questions from a saved conversation, shows what they stored, and leaves the file as it was', async () => {
    const before = await readFile(join(fixtures, 'sales.state.jsonl'), 'utf8');
    const args = [
      'render',
      'sales.aipl',
      '--state',
      'sales.state.jsonl',
      '--char',
      'Ava',
      ...SCRIPTED,
      ...NOW,
    ];
    const [text, json] = [await aipl(args), await aipl([...args, '--json'])];
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('Address the prospect as Dana.\nThey work at Globex.\n');
    expect(text.stdout).not.toContain('Offer a demo');
    expect(text.stderr).toMatch(
      /^\[aipl\] 2 model calls \(scripted\), 0 answers cached, \d+ ms; stored prospect\.name = "Dana"\n$/,
    );
    expect(JSON.parse(json.stdout)).toMatchObject({
      stored: [{ name: 'prospect.name', value: 'Dana', turn: 1, question: "What is the user's name?" }],
      calls: 2,
      scripted: true,
    });
    expect(await readFile(join(fixtures, 'sales.state.jsonl'), 'utf8')).toBe(before);
  });

  it('says to pass model options when the template asks a model and none is configured or can be fetched', async () => {
    const result = await aipl(['render', 'sales.aipl', '--state', 'values.json']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    // With no server, the embedded model is tried, and cannot be downloaded here: one error, one hint
    // (the first-use notice comes only once the model hub answers).
    const [error, hint, ...rest] = result.stderr.split('\n');
    expect(error).toMatch(
      /^error: sales\.aipl needs a model to answer isInterestedInDemo\(.*\): cannot download hf:\S+: 127\.0\.0\.1:9 cannot be reached/,
    );
    expect(hint).toMatch(
      /^hint: pass --model NAME .* `meta-agent models pull` .* or --provider scripted --script FILE/,
    );
    expect(rest).toEqual(['']);
  });

  it('shows a syntax error as check does, with exit code 2', async () => {
    const result = await aipl(['render', 'broken.aipl']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: broken\.aipl:4:30: .+\n4 \| .+\n {2}\| {30}\^\n$/);
  });

  it.each([
    [['missing.aipl'], /^error: missing\.aipl: no such file$/],
    [['greeting.aipl', '--state', 'missing.json'], /^error: missing\.json: no such file$/],
    [['greeting.aipl', '--set', 'stage=demo'], /argument 'stage=demo' is invalid\. expected ns\.key=value/],
    [['greeting.aipl', '--set', 'a.b.c=1'], /argument 'a\.b\.c=1' is invalid\. expected ns\.key=value/],
    [['greeting.aipl', '--now', '2025-02-30'], /argument '2025-02-30' is invalid\. expected an ISO date/],
    [['greeting.aipl', '--now', 'tomorrow'], /argument 'tomorrow' is invalid\. expected an ISO date/],
    [
      ['greeting.aipl', '--state', 'bad-values.json'],
      /^error: bad-values\.json: prospect\.employees is a number \(120\); values are strings$/,
    ],
    [
      ['greeting.aipl', '--state', 'sales.script.json'],
      /^error: sales\.script\.json: "rules" holds an array; a namespace holds an object of values$/,
    ],
    [
      ['greeting.aipl', '--state', 'greeting.aipl'],
      /^error: greeting\.aipl is neither a conversation state nor JSON/,
    ],
  ])('refuses %j in one line, exit 2, no stack trace', async (args, message) => {
    const result = await aipl(['render', ...args]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines[0]).toMatch(message);
    expect(lines.length).toBeLessThanOrEqual(2);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('meta-agent aipl --help', () => {
  it.each([
    ['check', ['aipl check sales.aipl', '--json', 'FILE:LINE:COLUMN']],
    [
      'render',
      ['--state values.json --set prospect.stage=demo', '--provider scripted', '--now', 'Exit code'],
    ],
  ])('teaches %s with examples', async (command, phrases) => {
    const result = await runCli(['aipl', command, '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Examples:');
    for (const phrase of phrases) expect(result.stdout).toContain(phrase);
  });
});
