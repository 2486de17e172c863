import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startOpenAIServer, type OpenAIServer } from '../support/openai-server.js';
import { runCli, type RunCliOptions } from '../support/run-cli.js';

let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function folder(files: Record<string, unknown> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'flow-cli-'));
  for (const [name, content] of Object.entries(files))
    await writeFile(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content));
  return dir;
}

/** `meta-agent flow run FILE …` against the loopback server, in `dir`. */
function flowRun(dir: string, args: string[], options: RunCliOptions = {}) {
  const models = server ? ['--base-url', server.url, '--model', 'gpt-4o-mini'] : [];
  return runCli(['flow', 'run', ...args, ...models], { cwd: dir, ...options });
}

/** The last user message of a chat request. */
function question(body: { messages: { role: string; content: unknown }[] }): string {
  return String(body.messages.at(-1)!.content);
}

const chain = {
  name: 'chain',
  inputs: { topic: {} },
  nodes: [
    { name: 'facts', prompt: 'Facts about $db.topic$?' },
    { name: 'angles', prompt: 'Angles on $db.topic$?' },
    { name: 'summary', prompt: 'Summarize.', dependencies: ['facts', 'angles'] },
  ],
};

describe('meta-agent flow run', () => {
  it('runs the shipped example offline and prints the plan', async () => {
    const result = await runCli([
      'flow',
      'run',
      'examples/plan-task.flow.json',
      '--provider',
      'scripted',
      '--script',
      'examples/plan-task.script.json',
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('1. Confirm the move date');
    expect(result.stderr).toContain('[scripted]');
    expect(result.stderr).toContain('[step 1] requirements, obstacles, resources');
    expect(result.stderr).toContain('~ gate: add node revise');
    expect(result.stderr).toMatch(/pass 1 done: 8\/8 answered/);
  });

  it('gives the same answers and report one node at a time as all at once, with the scripted provider', async () => {
    const run = (concurrency: string) =>
      runCli([
        'flow',
        'run',
        'examples/plan-task.flow.json',
        '--provider',
        'scripted',
        '--script',
        'examples/plan-task.script.json',
        '--concurrency',
        concurrency,
        '--json',
      ]);
    const reportOf = (stdout: string) => {
      const { ms: _ms, ...report } = JSON.parse(stdout.trim().split('\n').at(-1)!);
      return report;
    };
    const [sequential, concurrent] = [await run('1'), await run('8')];
    expect(reportOf(sequential.stdout)).toEqual(reportOf(concurrent.stdout));
    expect(reportOf(sequential.stdout)).toMatchObject({ complete: true, sinks: ['plan'] });
  });

  it('asks a real OpenAI-compatible server for every node, the independent ones at once', async () => {
    server = await startOpenAIServer({
      latencyMs: 150,
      reply: (body) => ({ text: `re: ${question(body)}` }),
    });
    const dir = await folder({ 'chain.flow.json': chain });
    const result = await flowRun(dir, ['chain.flow.json', '--input', 'topic=tides']);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe('re: Summarize.');
    const bodies = server.chatRequests();
    expect(bodies.map(question)).toEqual(['Facts about tides?', 'Angles on tides?', 'Summarize.']);
    expect(bodies[2]!.messages.map((m) => m.content)).toEqual([
      'Facts about tides?',
      're: Facts about tides?',
      'Angles on tides?',
      're: Angles on tides?',
      'Summarize.',
    ]);
    expect(server.maxInFlight).toBe(2);
  });

  it('asks a flow in as many round trips as it is deep, by default', async () => {
    // 12 nodes in layers of 6, 4 and 2, each depending on a node of the layer before: depth 3.
    const layers = [6, 4, 2];
    const nodes = layers.flatMap((size, layer) =>
      Array.from({ length: size }, (_, j) => ({
        name: `L${layer + 1}_${j + 1}`,
        prompt: `Part ${j + 1} of stage ${layer + 1} of $db.topic$.`,
        dependencies: layer === 0 ? [] : [`L${layer}_${(j % layers[layer - 1]!) + 1}`],
      })),
    );
    server = await startOpenAIServer({
      latencyMs: 300,
      reply: (body) => ({ text: `re: ${question(body)}` }),
    });
    const dir = await folder({ 'wide.flow.json': { name: 'wide', inputs: { topic: {} }, nodes } });
    const result = await flowRun(dir, ['wide.flow.json', '-i', 'topic=tides']);
    expect(result.code).toBe(0);
    const chats = server.requests.filter((r) => r.path === '/v1/chat/completions');
    expect(chats).toHaveLength(12);
    expect(Math.max(...chats.map((r) => r.round))).toBe(3);
    expect(server.maxInFlight).toBe(6);
  });

  it('trims a prompt past the model’s context by its rule, and says so, before the call', async () => {
    const long = (word: string) => Array.from({ length: 500 }, (_, i) => `${word}${i}`).join(' ');
    server = await startOpenAIServer({
      reply: (body) => ({ text: question(body) === 'Plan.' ? 'the plan' : long(question(body).slice(0, 4)) }),
    });
    const dir = await folder({
      'trim.flow.json': {
        name: 'trim',
        config: { system: 'You plan.', contextTokens: 1024 },
        nodes: [
          { name: 'a', prompt: 'Notes?' },
          { name: 'b', prompt: 'More?' },
          { name: 'c', prompt: 'Plan.', dependencies: ['a', 'b'] },
        ],
      },
    });
    const result = await flowRun(dir, ['trim.flow.json']);
    expect(result.code).toBe(0);
    const sent = server.chatRequests().find((body) => question(body) === 'Plan.')!.messages;
    expect(sent[0]).toEqual({ role: 'system', content: 'You plan.' });
    expect(sent.map((m) => m.content)).not.toContain('More?');
    expect(String(sent.at(-2)!.content)).toMatch(/^More\d+ [\s\S]*tokens cut/);
    expect(result.stderr).toMatch(
      /✂ c: prompt trimmed to the 1024-token context, 3 messages dropped, 1 message cut \(\d+ → \d+ tokens\)/,
    );

    const failing = await folder({
      'big.flow.json': {
        name: 'big',
        inputs: { text: {} },
        nodes: [{ name: 'read', prompt: 'Read: $db.text$' }],
      },
    });
    const before = server.chatRequests().length;
    const failed = await flowRun(failing, [
      'big.flow.json',
      '-i',
      `text=${long('w')}`,
      '--context-tokens',
      '1000',
    ]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(
      /read failed: node "read": its system messages and prompt take \d+ tokens, and its answer needs 256 more, past the model's 1000-token context/,
    );
    expect(server.chatRequests()).toHaveLength(before);
  });

  it('reads a database key not written yet as None, as AgentKit does, and says so', async () => {
    server = await startOpenAIServer({ reply: (body) => ({ text: `plan after ${question(body)}` }) });
    const dir = await folder({
      'replan.flow.json': {
        name: 'replan',
        nodes: [
          {
            name: 'plan',
            prompt: "Does the previous plan '$db.previous_plan$' still apply?",
            afterQuery: { code: 'db.previous_plan = "keep going"; answer' },
          },
        ],
      },
    });
    const first = await flowRun(dir, ['replan.flow.json', '--state', 'run.json']);
    expect(first.code).toBe(0);
    expect(first.stderr).toContain('? plan: not in the database, read as None: $db.previous_plan$');
    const second = await flowRun(dir, ['replan.flow.json', '--state', 'run.json']);
    expect(second.stderr).not.toContain('read as None');
    expect(server.chatRequests().map(question)).toEqual([
      "Does the previous plan 'None' still apply?",
      "Does the previous plan 'keep going' still apply?",
    ]);
  });

  it('applies an edge a node adds into a node of its own step, which then waits for it, one at a time too', async () => {
    const dir = await folder({
      'scout.flow.json': {
        name: 'scout',
        nodes: [
          {
            name: 'scout',
            prompt: 'Look around.',
            afterQuery: { code: 'flow.addEdge("scout", "act"); answer' },
          },
          { name: 'act', prompt: 'Act.' },
        ],
      },
    });
    for (const concurrency of ['1', '2']) {
      server = await startOpenAIServer({ reply: (body) => ({ text: `re: ${question(body)}` }) });
      const result = await flowRun(dir, ['scout.flow.json', '--concurrency', concurrency]);
      expect(result.code).toBe(0);
      expect(result.stderr).toContain('~ scout: add edge scout → act\n');
      expect(result.stderr).toContain('[step 2] act');
      const act = server.chatRequests().filter((body) => question(body) === 'Act.');
      expect(act.at(-1)!.messages.map((m) => m.content)).toEqual([
        'Look around.',
        're: Look around.',
        'Act.',
      ]);
      if (concurrency === '1') expect(act).toHaveLength(1);
      await server.close();
      server = undefined;
    }
  });

  it('asks one node at a time with --concurrency 1', async () => {
    server = await startOpenAIServer({ latencyMs: 50, reply: (body) => ({ text: `re: ${question(body)}` }) });
    const dir = await folder({ 'chain.flow.json': chain });
    const result = await flowRun(dir, ['chain.flow.json', '-i', 'topic=tides', '--concurrency', '1']);
    expect(result.code).toBe(0);
    expect(server.maxInFlight).toBe(1);
  });

  it('keeps the run in --state and starts the next pass from it', async () => {
    server = await startOpenAIServer({ reply: (body) => ({ text: `re: ${question(body)}` }) });
    const dir = await folder({ 'chain.flow.json': chain });
    const first = await flowRun(dir, ['chain.flow.json', '-i', 'topic=tides', '--state', 'run.json']);
    expect(first.code).toBe(0);
    const saved = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8'));
    expect(saved).toMatchObject({ format: 'meta-agent/flow-run@1', passes: 1, database: { topic: 'tides' } });
    expect(saved.last.summary.output).toBe('re: Summarize.');
    const second = await flowRun(dir, ['chain.flow.json', '-i', 'topic=moons', '--state', 'run.json']);
    expect(second.code).toBe(0);
    expect(second.stderr).toContain('pass 2');
    expect(JSON.parse(await readFile(join(dir, 'run.json'), 'utf8')).database.topic).toBe('moons');
  });

  it('finishes a pass killed midway without asking its finished nodes again', async () => {
    server = await startOpenAIServer({
      reply: (body) => ({
        text: `re: ${question(body)}`,
        delayMs: question(body) === 'Summarize.' ? 5000 : 0,
      }),
    });
    const dir = await folder({ 'chain.flow.json': chain });
    const killed = await flowRun(dir, ['chain.flow.json', '-i', 'topic=tides', '--state', 'run.json'], {
      killWhen: (stderr) => stderr.includes('[step 2]'),
    });
    expect(killed.signal).toBe('SIGKILL');
    const saved = JSON.parse(await readFile(join(dir, 'run.json'), 'utf8'));
    expect(Object.keys(saved.current.results)).toEqual(['facts', 'angles']);
    await server.close();
    server = await startOpenAIServer({ reply: (body) => ({ text: `again: ${question(body)}` }) });
    const resumed = await flowRun(dir, ['chain.flow.json', '--state', 'run.json']);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain('(resumed)');
    expect(server.chatRequests().map(question)).toEqual(['Summarize.']);
    expect(resumed.stdout.trim()).toBe('again: Summarize.');
  });

  it('stops on Ctrl+C, saying how to finish the pass', async () => {
    server = await startOpenAIServer({ latencyMs: 5000 });
    const dir = await folder({ 'chain.flow.json': chain });
    const result = await flowRun(dir, ['chain.flow.json', '-i', 'topic=tides', '--state', 'run.json'], {
      interruptWhen: (stderr) => stderr.includes('[step 1]'),
    });
    expect(result.code).toBe(130);
    expect(result.stderr).toContain(
      'finish the pass with: meta-agent flow run chain.flow.json --state run.json',
    );
  });

  it('exits 1 and names the failed node, and the nodes skipped after it', async () => {
    server = await startOpenAIServer({ reply: () => ({ text: 'not a number' }) });
    const dir = await folder({
      'count.flow.json': {
        nodes: [
          {
            name: 'count',
            prompt: 'How many?',
            afterQuery: {
              code: 'if (isNaN(Number(answer))) throw new Error("a number only"); Number(answer)',
            },
          },
          { name: 'double', prompt: 'Double it.', dependencies: ['count'] },
        ],
      },
    });
    const result = await flowRun(dir, ['count.flow.json']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('↻ count attempt 2: a number only');
    expect(result.stderr).toContain('⊘ double: skipped: upstream failed (count)');
    expect(result.stderr).toMatch(/count failed: node "count": no usable answer after 3 tries/);
    expect(server.chatRequests()).toHaveLength(3);
  });

  it('prints the events and the report as JSON lines with --json', async () => {
    server = await startOpenAIServer({ reply: (body) => ({ text: `re: ${question(body)}` }) });
    const dir = await folder({ 'chain.flow.json': chain });
    const result = await flowRun(dir, ['chain.flow.json', '-i', 'topic=tides', '--json']);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string });
    expect(lines[0]!.type).toBe('flow.started');
    expect(lines.at(-1)).toMatchObject({
      type: 'flow.report',
      complete: true,
      outputs: { summary: 're: Summarize.' },
    });
  });

  describe('clear errors, never a stack trace', () => {
    const cases: [string, Record<string, unknown>, string[], RegExp][] = [
      ['a missing file', {}, ['none.flow.json'], /none\.flow\.json: no such file/],
      [
        'bad JSON',
        { 'bad.flow.json': '{"nodes": [' },
        ['bad.flow.json'],
        /bad\.flow\.json: invalid JSON at line 1/,
      ],
      [
        'an unknown field',
        { 'x.flow.json': { nodes: [{ name: 'a', prompt: 'p', deps: [] }] } },
        ['x.flow.json'],
        /not a valid flow: nodes\[0\] \(a\): unknown field "deps"/,
      ],
      [
        'a cycle',
        {
          'c.flow.json': {
            nodes: [
              { name: 'a', prompt: 'p', dependencies: ['b'] },
              { name: 'b', prompt: 'q', dependencies: ['a'] },
            ],
          },
        },
        ['c.flow.json'],
        /the dependencies form a cycle: a → b → a/,
      ],
      ['a missing input', { 'chain.flow.json': chain }, ['chain.flow.json'], /needs --input topic=/],
      [
        'an unknown input',
        { 'chain.flow.json': chain },
        ['chain.flow.json', '-i', 'topic=x', '-i', 'tpic=y'],
        /takes no input "tpic"/,
      ],
      [
        'an input without a value',
        { 'chain.flow.json': chain },
        ['chain.flow.json', '-i', 'topic'],
        /expected NAME=VALUE/,
      ],
      [
        'a state file of something else',
        { 'chain.flow.json': chain, 's.json': { hello: 1 } },
        ['chain.flow.json', '-i', 'topic=x', '--state', 's.json'],
        /s\.json: not a saved flow run/,
      ],
    ];
    it.each(cases)('%s', async (_what, files, args, message) => {
      server = await startOpenAIServer();
      const result = await flowRun(await folder(files), args);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    });
  });
});
