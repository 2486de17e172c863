/**
 * A goal-loop run for tests: a real workspace in a temp folder, the real commands, and a model that
 * replays a fixed list of answers (the scripted provider) while every request it gets is kept, so a
 * test can read the prompt each step saw.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Approval } from '../../src/autonomous/authorize.js';
import { GoalLoop, type Approver, type GoalLoopOptions } from '../../src/autonomous/goal-loop.js';
import { newRunState, type Budget, type RunState } from '../../src/autonomous/run-state.js';
import { EventBus, type AgentEvent } from '../../src/events.js';
import { Script, ScriptedModel } from '../../src/llm/scripted.js';
import type { CompletionRequest, LanguageModel, ModelCapabilities } from '../../src/llm/types.js';
import { UsageMeter } from '../../src/llm/usage.js';
import type { CommandResources } from '../../tools/command.js';
import { commandRegistry } from '../../tools/index.js';
import { SandboxCodeRunner } from '../../tools/sandbox-code.js';
import { recordingStore } from './recording-store.js';
import { Workspace } from '../../tools/workspace.js';

/** The seed's answer JSON for `name` with `args`. */
export function answer(
  name: string,
  args: Record<string, unknown> = {},
  text = `I will use ${name}.`,
): string {
  return JSON.stringify({
    thoughts: { text, reasoning: 'It serves the goal.', plan: '- do it', criticism: 'none', speak: text },
    command: { name, args },
  });
}

/**
 * A model answering `answers` in order (the last one repeats), keeping the requests it was sent. It
 * declares the scripted provider's capabilities unless `capabilities` stands in for another's.
 */
export function replayModel(
  answers: string[],
  capabilities?: ModelCapabilities,
): LanguageModel & { requests: CompletionRequest[] } {
  const scripted = new ScriptedModel(new Script({ rules: [{ reply: answers }] }, 'replay'), 'chatbot');
  const requests: CompletionRequest[] = [];
  return {
    id: scripted.id,
    modelName: scripted.modelName,
    capabilities: capabilities ?? scripted.capabilities,
    answersFrom: scripted.answersFrom,
    requests,
    complete: (request) => {
      requests.push(request);
      return scripted.complete(request);
    },
    stream: (request, onChunk) => {
      requests.push(request);
      return scripted.stream(request, onChunk);
    },
    embed: (texts, signal) => scripted.embed(texts, signal),
  };
}

/** An approver answering from a list, and recording what it was asked. */
export function listApprover(answers: Approval[]): Approver & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    ask: async (request) => {
      asked.push(request.command);
      const next = answers.shift();
      if (next === undefined)
        throw new Error(`the approver was asked about ${request.command} with no answer left`);
      return next;
    },
  };
}

export interface TestRun {
  loop: GoalLoop;
  state: RunState;
  model: ReturnType<typeof replayModel>;
  workspace: Workspace;
  events: AgentEvent[];
  /** Every state saved, as JSON text, in order. */
  saves: string[];
  /** The prompt (every message joined) of each model call. */
  prompts(): string[];
  dispose(): void;
}

export interface TestRunOptions {
  answers: string[];
  /** What the model declares it can do; default: the scripted provider's. */
  capabilities?: ModelCapabilities;
  goals?: string[];
  budget?: Budget;
  yes?: boolean;
  allow?: string[];
  continuous?: number;
  approver?: Approver;
  state?: RunState;
  workspace?: Workspace;
  resources?: Partial<CommandResources>;
  clock?: () => number;
  historyTokens?: number;
  contextTokens?: number;
}

/** Makes a run over a fresh workspace (or the given one). */
export async function testRun(options: TestRunOptions): Promise<TestRun> {
  const workspace = options.workspace ?? (await Workspace.open(await mkdtemp(join(tmpdir(), 'goal-'))));
  const model = replayModel(options.answers, options.capabilities);
  const bus = new EventBus();
  const events: AgentEvent[] = [];
  bus.on((event) => events.push(event));
  const code = await SandboxCodeRunner.create();
  const state =
    options.state ??
    newRunState({
      name: 'Tester',
      role: 'an AI that tests the goal loop',
      goals: options.goals ?? ['Write the file the test asks for'],
      workspace: workspace.root,
      budget: options.budget ?? { maxSteps: 30 },
      ...(options.continuous !== undefined && { continuous: options.continuous }),
    });
  const saves: string[] = [];
  const resources: Partial<CommandResources> = { workspace, code, ...options.resources };
  const loopOptions: GoalLoopOptions = {
    state,
    chatbot: new UsageMeter(bus).wrap('chatbot', model),
    registry: commandRegistry().offered(resources),
    resources,
    resourceLines: ['File output in your workspace.'],
    permissions: { yes: options.yes ?? true, allow: new Set(options.allow ?? []) },
    ...(options.approver && { approver: options.approver }),
    keptAt: { store: recordingStore(saves), key: 'test-run' },
    events: bus,
    now: () => new Date('2026-11-24T12:00:00Z'),
    ...(options.clock && { clock: options.clock }),
    ...(options.historyTokens !== undefined && { historyTokens: options.historyTokens }),
    ...(options.contextTokens !== undefined && { contextTokens: options.contextTokens }),
  };
  return {
    loop: new GoalLoop(loopOptions),
    state,
    model,
    workspace,
    events,
    saves,
    prompts: () =>
      model.requests.map((request) => request.messages.map((message) => message.content).join('\n\n')),
    dispose: () => code.dispose(),
  };
}
