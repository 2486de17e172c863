/**
 * goal_loop nodes through the real CLI (`meta-agent call` and `chat`): the node's goals come from the
 * graph's variables, the goal loop runs in the --workspace with only the permissions the command line
 * gives, and the graph gets the run's result. The model is the scripted provider replaying the seed's
 * JSON answers: write_to_file, then task_complete.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { rememberAllowRule } from '../../src/autonomous/allow-rules.js';
import type { RunState } from '../../src/autonomous/run-state.js';
import { goalLoopHost } from '../../src/autonomous/nested-run.js';
import { Interpreter } from '../../src/engine/interpreter.js';
import { variablesInScope } from '../../src/engine/frames.js';
import { EventBus } from '../../src/events.js';
import type { ScriptFile } from '../../src/llm/scripted.js';
import { fileStore } from '../../src/store/files.js';
import { inMemoryStore } from '../../src/store/in-memory.js';
import { graphOf, noModels, scriptedModels } from '../support/agents.js';
import { closedUrl } from '../support/openai-server.js';
import { cliConfigDir, runCli } from '../support/run-cli.js';
import { loadRunFile } from '../../src/store/run-journal.js';

const GRAPH = 'test/fixtures/graphs/goal-loop.autogram.json';
const CHAT_GRAPH = 'test/fixtures/graphs/goal-loop-chat.autogram.json';
const SCRIPT = 'test/fixtures/graphs/goal-loop.script.json';
const TASK = 'build("Write the word Washington to out.txt")';

/** No model server anywhere: the script answers. */
let env: Record<string, string>;
beforeAll(async () => {
  env = { META_AGENT_PROBE_URLS: await closedUrl() };
});

const scripted = ['--provider', 'scripted', '--script', SCRIPT];

async function workspace(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'goal-node-'));
}

/** The run files the nested runs saved in the workspace. */
async function runFiles(root: string): Promise<string[]> {
  return readdir(join(root, '.meta-agent', 'runs')).catch(() => []);
}

async function savedRun(root: string): Promise<RunState> {
  const [name] = await runFiles(root);
  return await loadRunFile(join(root, '.meta-agent', 'runs', name!));
}

describe('a goal_loop node under meta-agent call', () => {
  it('runs the goals in the workspace with --allow and returns the result to the graph', async () => {
    const root = await workspace();
    const result = await runCli(
      ['call', GRAPH, TASK, ...scripted, '--workspace', root, '--allow', 'write_to_file'],
      { env },
    );
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      complete: true,
      reason: 'task_complete',
      detail: 'out.txt holds the word Washington',
      steps: 2,
    });
    expect(await readFile(join(root, 'out.txt'), 'utf8')).toBe('Washington');
    expect(await runFiles(root)).toEqual([
      expect.stringMatching(/^builder-build-task-[0-9a-f]+\.run\.json$/),
    ]);
    const run = await savedRun(root);
    expect(run.ended?.reason).toBe('task_complete');
    expect(run.agent).toEqual({
      name: 'Builder',
      role: 'an AI that completes goals for the agent graph builder (node build(task))',
      goals: ['Write the word Washington to out.txt', 'Shut down with task_complete when it is done'],
    });
    expect(result.stderr).toContain('[goal_loop] build(task): the run is saved to ');
  });

  it('refuses what the command line did not allow: the run ends refused and the graph still gets its result', async () => {
    const root = await workspace();
    const result = await runCli(['call', GRAPH, TASK, ...scripted, '--workspace', root], { env });
    expect(result.code).toBe(0);
    const value = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(value).toMatchObject({ complete: false, reason: 'refused', steps: 2 });
    expect(value.detail).toContain('pass --allow write_to_file');
    await expect(readFile(join(root, 'out.txt'), 'utf8')).rejects.toThrow(/ENOENT/);
    expect((await savedRun(root)).ended?.reason).toBe('refused');
  });

  it('lets the commands the workspace remembers run, as meta-agent run does', async () => {
    const root = await workspace();
    await rememberAllowRule(root, [], 'write_to_file', cliConfigDir);
    const result = await runCli(['call', GRAPH, TASK, ...scripted, '--workspace', root], { env });
    expect(JSON.parse(result.stdout)).toMatchObject({ complete: true, reason: 'task_complete' });
    expect(await readFile(join(root, 'out.txt'), 'utf8')).toBe('Washington');
  });

  it('holds the run to --goal-max-steps', async () => {
    const root = await workspace();
    const result = await runCli(
      ['call', GRAPH, TASK, ...scripted, '--workspace', root, '--yes', '--goal-max-steps', '1'],
      { env },
    );
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ complete: false, reason: 'max_steps', steps: 1 });
    // --yes let the one step's command run.
    expect(await readFile(join(root, 'out.txt'), 'utf8')).toBe('Washington');
  });

  it('refuses an --allow name that is no command before anything runs', async () => {
    const root = await workspace();
    const result = await runCli(
      ['call', GRAPH, TASK, ...scripted, '--workspace', root, '--allow', 'write_file'],
      { env },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'error: --allow: there is no command "write_file"; did you mean "write_to_file"?',
    );
    expect(await runFiles(root)).toEqual([]);
  });
});

describe('a goal_loop node under meta-agent chat', () => {
  it('runs with the conversation and puts the goal events in the --json stream', async () => {
    const root = await workspace();
    const result = await runCli(
      ['chat', CHAT_GRAPH, ...scripted, '--workspace', root, '--allow', 'write_to_file', '--json'],
      { env },
    );
    expect(result.code).toBe(0);
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string } & Record<string, unknown>);
    const types = events.map((event) => event.type);
    expect(events.find((event) => event.type === 'goal.started')).toMatchObject({
      name: 'Agent',
      goals: ['Write the word Washington to out.txt'],
    });
    expect(types.indexOf('goal.ended')).toBeGreaterThan(types.indexOf('goal.started'));
    expect(events.find((event) => event.type === 'reply')).toMatchObject({
      node: 'report',
      text: `The run ended: ${JSON.stringify({ complete: true, reason: 'task_complete', detail: 'out.txt holds the word Washington', steps: 2 })}`,
    });
    expect(await readFile(join(root, 'out.txt'), 'utf8')).toBe('Washington');
  });
});

describe('the goal loop lent to code nodes (goalLoopHost)', () => {
  const script = JSON.parse(readFileSync(SCRIPT, 'utf8')) as ScriptFile;

  /** Runs a graph whose code node calls goals.run(`request`), under `--goal-max-steps cap`. */
  async function codeRun(request: string, cap: number) {
    const root = await workspace();
    const graph = graphOf(
      [{ name: 'start1', action: 'code', instruction: `out = goals.run(${request})`, transitions: ['quit'] }],
      {},
      'coder',
    );
    const models = scriptedModels(script);
    const events = new EventBus();
    const goals = await goalLoopHost({
      graph,
      models,
      events,
      store: fileStore().goalRuns,
      workspace: root,
      yes: true,
      maxSteps: cap,
    });
    const agent = await Interpreter.create({ graph, models, events, host: { goals } });
    try {
      const { state } = await agent.reply(undefined);
      return { out: variablesInScope(state).out, root };
    } finally {
      agent.dispose();
    }
  }

  it('runs from code, and a graph may ask for fewer steps than the command line allows', async () => {
    const goal = "{ goals: ['Write the word Washington to out.txt'], maxSteps: 1 }";
    const { out, root } = await codeRun(goal, 20);
    expect(out).toMatchObject({ complete: false, reason: 'max_steps', steps: 1 });
    // Named after the graph and, from code, "code".
    expect(await runFiles(root)).toEqual([expect.stringMatching(/^coder-code-[0-9a-f]+\.run\.json$/)]);
  });

  it('never grants a graph more steps than the command line', async () => {
    const { out } = await codeRun("{ goals: ['Write the word Washington to out.txt'], maxSteps: 50 }", 1);
    expect(out).toMatchObject({ reason: 'max_steps', steps: 1 });
  });

  it('refuses what is not a request of goals, before any run starts', async () => {
    const graph = { name: 'g', config: { agentName: 'Agent' } };
    const goals = await goalLoopHost({
      graph,
      models: noModels,
      events: new EventBus(),
      store: inMemoryStore().goalRuns,
    });
    const run = goals.functions.run!;
    await expect(run({ goals: [] })).rejects.toThrow(/^goals\.run: goals: /);
    await expect(run({ goals: ['a', 'b', 'c', 'd', 'e', 'f'] })).rejects.toThrow(/^goals\.run: goals: /);
    await expect(run({ goals: ['a'], allow: ['delete_file'] })).rejects.toThrow(/^goals\.run: /);
    await expect(run({ goals: ['a'], maxSteps: 0 })).rejects.toThrow(/^goals\.run: maxSteps: /);
  });
});
