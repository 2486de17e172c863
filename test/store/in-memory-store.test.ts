import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentOpener, MAX_AGENT_DEPTH, subAgentsOf, type AgentWorld } from '../../src/agent/open.js';
import { GoalLoop } from '../../src/autonomous/goal-loop.js';
import { openGoalResources } from '../../src/autonomous/resources.js';
import { newRunState } from '../../src/autonomous/run-state.js';
import { Conversation } from '../../src/engine/conversation.js';
import { variablesInScope } from '../../src/engine/frames.js';
import { newState } from '../../src/engine/state.js';
import { EventBus } from '../../src/events.js';
import { openFlow } from '../../src/flow/load.js';
import { newFlowRunState } from '../../src/flow/run-state.js';
import { runFlowPass } from '../../src/flow/runner.js';
import { loadGraphFile } from '../../src/graph/load.js';
import { StaticGraph } from '../../src/graph/view.js';
import type { ScriptFile } from '../../src/llm/scripted.js';
import { DuplicateWrite, inMemoryStore, type InMemoryStore } from '../../src/store/in-memory.js';
import { graphOf, scriptedModels } from '../support/agents.js';

// A second implementation of the store, in memory, runs a chat (whose goal_loop node starts a nested
// goal run), a goal run of its own and a flow pass end to end. Everything they keep must reach it, and
// nothing may be written beside it: the folder they work in holds only what the agent's command wrote.

const root = new URL('../../', import.meta.url).pathname;
const script = (path: string) => JSON.parse(readFileSync(join(root, path), 'utf8')) as ScriptFile;
const GOAL_SCRIPT = script('test/fixtures/graphs/goal-loop.script.json');

/** Every file under `dir`, relative to it, folders left out. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

describe('a second store, in memory', () => {
  let dir: string;
  let store: InMemoryStore;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'meta-agent-store-'));
    store = inMemoryStore();
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  function world(models = scriptedModels(GOAL_SCRIPT)): AgentWorld {
    const workspace = join(dir, 'ws');
    return {
      models,
      events: new EventBus(),
      store,
      goalLoop: { workspace, allow: ['write_to_file'] },
      folder: dir,
    };
  }

  it('keeps a chat and the goal run its goal_loop node starts, and nothing else is written', async () => {
    const { file } = await loadGraphFile(join(root, 'test/fixtures/graphs/goal-loop-chat.autogram.json'));
    const open = agentOpener(world());
    const interpreter = await open({ graph: new StaticGraph(file) });
    try {
      const chat = new Conversation(interpreter, undefined, { store: store.conversations, key: 'chat-1' });
      const { reply, ended } = await chat.reply(undefined);
      expect(reply).toMatch(/^The run ended: .*task_complete/);
      expect(ended).toBe(true);
    } finally {
      interpreter.dispose();
    }
    const saved = await store.conversations.load('chat-1');
    expect(saved).toMatchObject({ graphName: 'reporter', ended: true });
    expect(variablesInScope(saved!).result).toMatchObject({ complete: true, reason: 'task_complete' });
    const run = store.writes.find((write) => write.part === 'goal-run');
    const nested = await store.goalRuns.load(run!.key);
    expect(nested).toMatchObject({ ended: { reason: 'task_complete' } });
    expect(store.writes.flatMap((write) => write.recorded)).toEqual(
      expect.arrayContaining(['step 1', `turn ${saved!.steps}`]),
    );
    expect(await filesUnder(dir)).toEqual(['ws/out.txt']);
  });

  it('keeps a goal run at every phase of its steps, and the run resumes from it', async () => {
    const { models, events, goalLoop } = world();
    const state = newRunState({
      name: 'Writer',
      role: 'an AI that writes files',
      goals: ['Write the word Washington to out.txt'],
      workspace: goalLoop!.workspace!,
      budget: { maxSteps: 5 },
    });
    const key = await store.goalRuns.create(state, ['Writer']);
    const opened = await openGoalResources({ workspace: goalLoop!.workspace!, models, events });
    try {
      const loop = new GoalLoop({
        state,
        chatbot: models.chatbot,
        registry: opened.registry,
        resources: opened.resources,
        resourceLines: opened.lines,
        permissions: { yes: false, allow: new Set(['write_to_file']) },
        keptAt: { store: store.goalRuns, key },
        events,
      });
      await loop.run();
    } finally {
      opened.dispose();
    }
    const saved = await store.goalRuns.load(key);
    expect(saved).toMatchObject({ id: state.id, used: { steps: 2 }, ended: { reason: 'task_complete' } });
    expect(saved.history.filter((entry) => entry.kind === 'command')).toHaveLength(2);
    const phases = store.writes.filter((write) => write.key === key);
    expect(phases.length).toBeGreaterThan(4);
    expect(await filesUnder(dir)).toEqual(['ws/out.txt']);
  });

  it('keeps a flow pass after every step', async () => {
    const { flow } = await openFlow(join(root, 'examples/plan-task.flow.json'));
    const model = scriptedModels(script('examples/plan-task.script.json')).chatbot;
    const report = await runFlowPass({
      flow,
      state: newFlowRunState(flow),
      model,
      events: new EventBus(),
      keptAt: { store: store.flowRuns, key: 'plan-1' },
    });
    expect(report.complete).toBe(true);
    const saved = await store.flowRuns.load('plan-1', flow);
    expect(saved).toMatchObject({ flow: 'plan-task', passes: 1 });
    expect(saved!.last.plan?.output).toMatch(/^1\. Confirm the move date/);
    expect(store.writes.flatMap((write) => write.recorded)).toContain('pass 1 plan');
    expect(await filesUnder(dir)).toEqual([]);
  });

  it('refuses a second, different state under a turn it holds, as a unique key would', async () => {
    const state = newState(
      graphOf([{ name: 'a', action: 'chat_exact', instruction: 'Hi', transitions: ['quit'] }]),
    );
    await store.conversations.save('c', state);
    await store.conversations.save('c', state);
    await expect(store.conversations.save('c', { ...state, pendingUser: 'changed' })).rejects.toThrow(
      DuplicateWrite,
    );
  });

  it('lends sub-agents at most MAX_AGENT_DEPTH levels deep', () => {
    const top = world();
    expect(subAgentsOf(top, 0)).toBeDefined();
    expect(subAgentsOf(top, MAX_AGENT_DEPTH - 2)).toBeDefined();
    expect(subAgentsOf(top, MAX_AGENT_DEPTH - 1)).toBeUndefined();
  });
});
