/**
 * Goal runs started over HTTP: `meta-agent run`'s loop (goals, budgets, a workspace), on the server's
 * models and under the server's own permissions (its --workspace, --allow, --yes and --goal-max-steps),
 * never a request's: a request may ask for smaller budgets, not for more. A command those permissions
 * do not let run waits for its owner's answer over HTTP (http-approver.ts). Each key's runs work in its
 * own folder of the server's workspace, so keys never see each other's files, and each run is saved
 * through the store after every phase of a step, as `meta-agent run` saves it (it can go on with
 * `meta-agent run --resume`).
 *
 * When the server stops, a run waiting for an answer is saved where it stood at once, and a running
 * one stops before its next command with an effect, so the shutdown waits for no one's answer.
 */
import { join, resolve } from 'node:path';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { subAgentsOf } from '../agent/open.js';
import { allowedCommands } from '../autonomous/allow-rules.js';
import { spendOf } from '../autonomous/budget.js';
import { GoalLoop } from '../autonomous/goal-loop.js';
import { DEFAULT_GOAL_MAX_STEPS } from '../autonomous/nested-run.js';
import { openGoalResources, type GoalResources } from '../autonomous/resources.js';
import { workspaceFolder } from '../autonomous/run-file.js';
import { DEFAULT_ROLE, newRunState, type RunState } from '../autonomous/run-state.js';
import { DurableApprover, answerQuestion } from '../durable/approvals.js';
import { isUserError } from '../errors.js';
import { EventBus, type AgentEvent, type GoalEndReason, type GoalSpend } from '../events.js';
import { UsageMeter } from '../llm/usage.js';
import type { ServeContext } from './context.js';
import { ApiError } from './errors.js';
import { EventLog } from './event-log.js';
import { HttpApprover, notAwaiting, ServerStopping } from './http-approver.js';
import { OwnedWork } from './owned-work.js';
import { pythonRuntimeOf } from './python-runtimes.js';

/** What a client asks for (POST /v1/runs). */
export interface RunRequest {
  name?: string;
  role?: string;
  goals: string[];
  maxSteps?: number;
  maxTokens?: number;
  maxCostUsd?: number;
  maxTimeSeconds?: number;
}

/** Why a run ended: the goal loop's reasons, a failure (a model that cannot be reached), or a stop. */
export type RunEndReason = GoalEndReason | 'failed' | 'stopped';

/** A run as the routes show it. */
export interface RunView {
  id: string;
  name: string;
  role: string;
  goals: string[];
  status: 'running' | 'awaiting' | 'ended';
  awaiting?: { step: number; name: string; args: Record<string, unknown>; reason: string };
  ended?: { reason: RunEndReason; detail: string };
  spend: GoalSpend;
  /** The run's folder in the server's workspace: its owner's. */
  workspace: string;
}

/** One key's runs in progress at once (running or waiting for an answer). */
const MAX_IN_PROGRESS = 4;

/** One key's ended runs kept in the process for their views and events. */
const MAX_KEPT = 50;

export class GoalRuns {
  readonly #ctx: ServeContext;
  readonly #runs = new OwnedWork<LiveRun>('runs', { inProgress: MAX_IN_PROGRESS, kept: MAX_KEPT });
  #stopping = false;

  constructor(ctx: ServeContext) {
    this.#ctx = ctx;
    void ctx.closing.then(() => {
      this.#stopping = true;
      for (const run of this.#runs.inProgress()) run.stop();
    });
  }

  /** Starts `owner`'s run of `request`; it goes on after this returns. */
  async start(owner: string, request: RunRequest): Promise<LiveRun> {
    if (this.#stopping)
      throw new ApiError(
        503,
        'the server is shutting down; start the run again once it is back',
        'shutting_down',
      );
    const cap = this.#ctx.goalLoop.maxSteps ?? DEFAULT_GOAL_MAX_STEPS;
    if (request.maxSteps !== undefined && request.maxSteps > cap)
      throw new ApiError(
        400,
        `maxSteps: this server lets a run take at most ${cap} steps`,
        'budget_above_cap',
        'maxSteps',
      );
    return this.#runs.start(owner, () =>
      this.#open(owner, { ...request, maxSteps: request.maxSteps ?? cap }),
    );
  }

  /** `owner`'s run `id`; undefined when there is none, or it is another's. */
  find(owner: string, id: string): LiveRun | undefined {
    return this.#runs.find(owner, id);
  }

  /** `owner`'s runs, the newest first. */
  list(owner: string): LiveRun[] {
    return this.#runs.list(owner);
  }

  /** Opens the run in `owner`'s folder and starts its loop. */
  async #open(owner: string, request: RunRequest & { maxSteps: number }): Promise<LiveRun> {
    const ctx = this.#ctx;
    const folder = ownerFolder(owner);
    const workspace = await ownWorkspace(ctx, folder);
    const name = request.name ?? 'Agent';
    const state = newRunState({
      name,
      role: request.role ?? DEFAULT_ROLE,
      goals: request.goals,
      workspace,
      budget: {
        maxSteps: request.maxSteps,
        ...(request.maxTokens !== undefined && { maxTokens: request.maxTokens }),
        ...(request.maxCostUsd !== undefined && { maxCostUsd: request.maxCostUsd }),
        ...(request.maxTimeSeconds !== undefined && { maxTimeMs: request.maxTimeSeconds * 1000 }),
      },
    });
    const events = new EventBus();
    const models = new UsageMeter(events).meter(ctx.models);
    const world = {
      models,
      events,
      store: ctx.store,
      goalLoop: { ...ctx.goalLoop, workspace },
      ...(ctx.mcp && { mcp: ctx.mcp }),
      folder: workspace,
      python: pythonRuntimeOf(owner),
    };
    const subAgents = subAgentsOf(world, 0);
    const opened = await openGoalResources({
      workspace,
      models,
      events,
      python: world.python,
      ...(subAgents && { subAgents }),
      ...(ctx.mcp && { mcp: ctx.mcp, onNotice: (message: string) => ctx.onProblem(message) }),
    }).catch((error: unknown) => {
      throw serverFailure(error, ctx);
    });
    try {
      const allow = await allowedCommands(
        ctx.goalLoop.allow ?? [],
        workspace,
        opened.registry.names(),
        (message) => ctx.onProblem(message),
      );
      const key = await ctx.store.goalRuns.create(state, [name]);
      const approver = ctx.durable ? new DurableApprover(state.id) : new HttpApprover();
      const loop = new GoalLoop({
        state,
        chatbot: models.chatbot,
        registry: opened.registry,
        resources: opened.resources,
        resourceLines: opened.lines,
        permissions: { yes: ctx.goalLoop.yes ?? false, allow },
        approver,
        keptAt: { store: ctx.store.goalRuns, key },
        events,
      });
      const run = new LiveRun({ owner, folder, loop, approver, events, opened, ctx });
      // The server began to stop while the run was being opened.
      if (this.#stopping) run.stop();
      return run;
    } catch (error) {
      opened.dispose();
      throw serverFailure(error, ctx);
    }
  }
}

interface LiveRunSetup {
  owner: string;
  folder: string;
  loop: GoalLoop;
  approver: HttpApprover | DurableApprover;
  events: EventBus;
  opened: GoalResources;
  ctx: ServeContext;
}

/** A run in this process: its loop going on, its events for streams, and its open question. */
export class LiveRun {
  readonly owner: string;
  readonly log = new EventLog();
  /** Settles once the loop has stopped, for whatever reason. */
  readonly done: Promise<void>;
  readonly #loop: GoalLoop;
  readonly #approver: HttpApprover | DurableApprover;
  readonly #folder: string;
  /** How the loop ended when it did not end the run itself: it failed, or the server stopped it. */
  #halted: { reason: 'failed' | 'stopped'; detail: string } | undefined;
  #finished = false;
  /** The run's time before this process, and when this process's part began. */
  readonly #elapsedBefore: number;
  readonly #sessionStart = performance.now();

  constructor({ owner, folder, loop, approver, events, opened, ctx }: LiveRunSetup) {
    this.owner = owner;
    this.#loop = loop;
    this.#approver = approver;
    this.#folder = folder;
    this.#elapsedBefore = loop.state.used.elapsedMs;
    const unsubscribe = events.on((event) => this.log.append(this.#shown(event)));
    this.done = ctx.track(
      loop
        .run()
        .then(
          () => undefined,
          (error: unknown) => this.#halt(error, ctx),
        )
        .finally(() => {
          this.#finished = true;
          unsubscribe();
          opened.dispose();
        }),
    );
  }

  get id(): string {
    return this.#loop.state.id;
  }

  get finished(): boolean {
    return this.#finished;
  }

  get state(): RunState {
    return this.#loop.state;
  }

  view(): RunView {
    const { state } = this;
    const awaiting = this.#approver.awaiting;
    const ended = state.ended ?? this.#halted;
    const elapsed = this.#finished
      ? state.used.elapsedMs
      : this.#elapsedBefore + (performance.now() - this.#sessionStart);
    return {
      id: state.id,
      name: state.agent.name,
      role: state.agent.role,
      goals: state.agent.goals,
      status: this.#finished ? 'ended' : awaiting ? 'awaiting' : 'running',
      ...(awaiting && {
        awaiting: {
          step: awaiting.step,
          name: awaiting.command,
          args: awaiting.args,
          reason: awaiting.reason,
        },
      }),
      ...(this.#finished && ended && { ended }),
      spend: spendOf(state, elapsed),
      workspace: this.#folder,
    };
  }

  /** Answers the command waiting for approval (`y`, `y -N`, `n`, or feedback); 409 when none waits. */
  async answer(text: string): Promise<void> {
    if (this.#approver instanceof HttpApprover) this.#approver.answer(text);
    else await answerRun(this.id, text);
  }

  /** The server is stopping: withdraw the open question, and ask (so stop) before the next command. */
  stop(): void {
    this.#loop.interrupt();
    if (this.#approver instanceof HttpApprover) this.#approver.stop();
    else this.#approver.stop(new ServerStopping());
  }

  /** A loop that threw: the run is saved at its last phase; the stream is told why it ends. */
  #halt(error: unknown, ctx: ServeContext): void {
    if (error instanceof ServerStopping) {
      this.#halted = { reason: 'stopped', detail: error.message };
      return;
    }
    const detail = isUserError(error) ? error.message : 'the run failed; the server’s log says why';
    if (!isUserError(error))
      ctx.onProblem(error instanceof Error ? (error.stack ?? error.message) : String(error));
    this.#halted = { reason: 'failed', detail };
    this.log.append({ type: 'error', message: detail });
  }

  /** An event as a client sees it: the workspace by its folder's name, not the server's path. */
  #shown(event: AgentEvent): AgentEvent {
    return event.type === 'goal.started' ? { ...event, workspace: this.#folder } : event;
  }
}

/**
 * Sends `text` to the question run `id` waits on, as a DBOS message (it may wait in another server of
 * the database); a 409, as for a run in this process, when none waits.
 */
export async function answerRun(id: string, text: string): Promise<void> {
  const outcome = await answerQuestion(DBOS, id, text);
  if (outcome.kind !== 'sent') throw notAwaiting();
}

/**
 * The folder of `owner`'s runs in the server's workspace. Owner names are letters, digits, `_`, `-` and
 * `.`; one starting with dots (`..`) has them written `%2E`, which no other owner name holds.
 */
function ownerFolder(owner: string): string {
  return owner.replace(/^\.+/, (dots) => '%2E'.repeat(dots.length));
}

/** `folder` of the server's workspace, made when missing; the operator is told why it cannot be. */
async function ownWorkspace(ctx: ServeContext, folder: string): Promise<string> {
  try {
    return await workspaceFolder(join(resolve(ctx.goalLoop.workspace ?? 'workspace'), folder));
  } catch (error) {
    ctx.onProblem((error as Error).message);
    throw new ApiError(
      500,
      'the server cannot open your workspace folder; its log says why',
      'workspace_unusable',
    );
  }
}

/** A run that could not start: the operator's problem (its flags, its files), said to the operator. */
function serverFailure(error: unknown, ctx: ServeContext): ApiError {
  if (error instanceof ApiError) return error;
  ctx.onProblem(error instanceof Error ? error.message : String(error));
  return new ApiError(500, 'the server could not start the run; its log says why', 'run_not_started');
}
