/**
 * What the goal view shows, as a pure fold over the goal events (`reduceGoalView`). Finished things
 * (the header, each step's thoughts and command, each outcome, warnings) are appended to `items`, which
 * the view prints once through `<Static>`; only `current` (the step under way), the files, the spend
 * and the end change in place. All model and tool text is made safe here, as it enters.
 */
import type {
  GoalWarningKind,
  AgentEvent,
  Authorization,
  FileTouch,
  GoalEndReason,
  GoalSpend,
  Thoughts,
} from '../../events.js';
import type { HistoryEntry, RunState } from '../../autonomous/run-state.js';
import { shownArgs, untrusted, type ShownArg } from './shown-text.js';

/** Most characters of one thoughts field kept. */
const THOUGHT_CHARS = 2000;

/** What the model chose in a step. */
export interface ShownCommand {
  name: string;
  args: ShownArg[];
}

/** How a step came out. */
export type StepOutcome =
  | { kind: 'result'; ok: boolean; output: string; files: FileTouch[] }
  /** Not run: refused with nobody to ask, or the user answered with feedback (or a resumed run's note). */
  | { kind: 'refused'; feedback?: string; message?: string }
  /** The user answered `n`: the run stops. */
  | { kind: 'stopped' }
  | { kind: 'unusable'; problem: string; streak?: number }
  /** A command with a side effect that was running when an earlier session stopped; not run again. */
  | { kind: 'interrupted' };

/** A line (or block) printed once, in order, above the live part of the view. */
export type GoalItem =
  | { id: number; kind: 'header'; name: string; role: string; goals: string[]; workspace: string }
  /** A resumed run: its earlier steps follow. */
  | { id: number; kind: 'resumed'; steps: number }
  /** A step's thoughts and chosen command (either may be missing from an unusable answer). */
  | { id: number; kind: 'step'; step: number; thoughts?: Thoughts; command?: ShownCommand }
  | { id: number; kind: 'outcome'; step: number; name?: string; by?: Authorization; outcome: StepOutcome }
  | { id: number; kind: 'warning'; step: number; warning?: GoalWarningKind; message: string };

/** Distributes `Omit` over the union, so each item kind keeps its own fields. */
type NewItem = GoalItem extends infer T ? (T extends GoalItem ? Omit<T, 'id'> : never) : never;

/** Where the step under way is. */
export type StepPhase = 'thinking' | 'chosen' | 'asking' | 'running';

/** The step under way: not finished, so drawn in the live part of the view. */
export interface CurrentStep {
  step: number;
  phase: StepPhase;
  /** Thoughts not printed yet (the command that follows them prints them). */
  thoughts?: Thoughts;
  command?: ShownCommand;
  /** Why the user is asked. */
  reason?: string;
  by?: Authorization;
}

/** The run's end, from `goal.ended`. */
export interface GoalEnd {
  reason: GoalEndReason;
  detail: string;
}

export interface GoalView {
  /** Printed once each, in order; an item's id is its index. */
  items: GoalItem[];
  current?: CurrentStep;
  /** Workspace files touched so far with their last change, the latest last. */
  files: FileTouch[];
  spend: GoalSpend;
  /** Commands that still run without asking (`y -N`, `--continuous N`). */
  continuousLeft: number;
  ended?: GoalEnd;
}

/** The view before any event; with a run, its header, earlier steps and pending command show at once. */
export function initialGoalView(run?: RunState): GoalView {
  let view: GoalView = {
    items: [],
    files: [],
    spend: { steps: 0, tokens: 0, costUsd: 0, elapsedMs: 0 },
    continuousLeft: 0,
  };
  if (!run) return view;
  const { agent, used, budget } = run;
  view = push(view, { kind: 'header', ...header(agent.name, agent.role, agent.goals, run.workspace) });
  if (used.steps > 0 || run.history.length > 0) view = push(view, { kind: 'resumed', steps: used.steps });
  for (const entry of run.history) view = withHistoryEntry(view, entry);
  if (run.pending) {
    const { step, thoughts, command, phase, by } = run.pending;
    const shown = { name: untrusted(command.name, 200), args: shownArgs(command.args) };
    view = push(view, { kind: 'step', step, thoughts: safeThoughts(thoughts), command: shown });
    view = {
      ...view,
      current: {
        step,
        phase: phase === 'answered' ? 'chosen' : 'running',
        command: shown,
        ...(by && { by }),
      },
    };
  }
  return {
    ...view,
    continuousLeft: run.continuousLeft,
    spend: {
      steps: used.steps,
      tokens: used.promptTokens + used.completionTokens,
      costUsd: used.costUsd,
      elapsedMs: used.elapsedMs,
      ...(budget.maxSteps !== undefined && { maxSteps: budget.maxSteps }),
      ...(budget.maxTokens !== undefined && { maxTokens: budget.maxTokens }),
      ...(budget.maxCostUsd !== undefined && { maxCostUsd: budget.maxCostUsd }),
      ...(budget.maxTimeMs !== undefined && { maxTimeMs: budget.maxTimeMs }),
    },
  };
}

/** Folds one event into the view. Returns the same object for events the view does not show. */
export function reduceGoalView(view: GoalView, event: AgentEvent): GoalView {
  switch (event.type) {
    case 'goal.started':
      if (view.items.some((item) => item.kind === 'header')) return view;
      return push(view, {
        kind: 'header',
        ...header(event.name, event.role, event.goals, event.workspace),
      });
    case 'goal.step':
      return { ...flush(view), current: { step: event.step, phase: 'thinking' } };
    case 'goal.thoughts':
      return { ...view, current: { ...current(view, event.step), thoughts: safeThoughts(event.thoughts) } };
    case 'goal.command': {
      const step = current(view, event.step);
      const command = { name: untrusted(event.name, 200), args: shownArgs(event.args) };
      const printed = push(view, {
        kind: 'step',
        step: event.step,
        command,
        ...(step.thoughts && { thoughts: step.thoughts }),
      });
      return { ...printed, current: { step: event.step, phase: 'chosen', command } };
    }
    case 'goal.awaiting': {
      const step = current(view, event.step);
      return {
        ...view,
        // Asking ends any countdown (Ctrl+C, or a budget running low).
        continuousLeft: 0,
        current: {
          ...step,
          phase: 'asking',
          command: step.command ?? { name: untrusted(event.name, 200), args: shownArgs(event.args) },
          reason: untrusted(event.reason, 500),
        },
      };
    }
    case 'goal.authorized':
      return {
        ...view,
        continuousLeft: event.continuousLeft ?? 0,
        current: { ...current(view, event.step), phase: 'running', by: event.by },
      };
    case 'goal.refused':
      return finish(view, event.step, {
        kind: 'refused',
        ...(event.feedback !== undefined && { feedback: untrusted(event.feedback, 2000) }),
      });
    case 'goal.result':
      return withFiles(
        finish(view, event.step, {
          kind: 'result',
          ok: event.ok,
          output: untrusted(event.output),
          files: safeFiles(event.files),
        }),
        event.files,
      );
    case 'goal.unusable':
      return finish(view, event.step, {
        kind: 'unusable',
        problem: untrusted(event.problem, 2000),
        streak: event.streak,
      });
    case 'goal.warning': {
      // The resume warning is about the step a stopped session left running: it is not run again.
      const settled =
        event.kind === 'resume' && view.current?.step === event.step && view.current.phase === 'running'
          ? finish(view, event.step, { kind: 'interrupted' })
          : view;
      return push(settled, {
        kind: 'warning',
        step: event.step,
        warning: event.kind,
        message: untrusted(event.message, 2000),
      });
    }
    case 'goal.spend': {
      const { type: _type, ...spend } = event;
      return { ...view, spend };
    }
    case 'goal.ended': {
      const { type: _type, reason, detail, ...spend } = event;
      // A command asked for and not answered with a run stops with the run (the user answered `n`).
      const last = view.current;
      const settled =
        last?.phase === 'asking' && reason === 'user'
          ? finish(view, last.step, { kind: 'stopped' })
          : flush(view);
      return { ...settled, spend, continuousLeft: 0, ended: { reason, detail: untrusted(detail, 2000) } };
    }
    default:
      return view;
  }
}

function header(name: string, role: string, goals: string[], workspace: string) {
  return {
    name: untrusted(name, 200),
    role: untrusted(role, 1000),
    goals: goals.map((goal) => untrusted(goal, 1000)),
    workspace: untrusted(workspace, 1000),
  };
}

function push(view: GoalView, item: NewItem): GoalView {
  return { ...view, items: [...view.items, { ...item, id: view.items.length } as GoalItem] };
}

/** The step under way, or a new one for `step` (events of a step whose start the view missed). */
function current(view: GoalView, step: number): CurrentStep {
  return view.current?.step === step ? view.current : { step, phase: 'thinking' };
}

/** Ends the step under way with `outcome`. */
function finish(view: GoalView, step: number, outcome: StepOutcome): GoalView {
  const { current: now, ...rest } = flush(view, step);
  return push(rest, {
    kind: 'outcome',
    step,
    ...(now?.command && { name: now.command.name }),
    ...(now?.by && { by: now.by }),
    outcome,
  });
}

/**
 * Prints what the step under way has not printed yet (its thoughts, when no command followed them), and
 * returns the view without it; with `keep` (the step being finished) the step stays as `current`, for
 * `finish` to read, and is printed even with no thoughts, so that its outcome follows its number.
 */
function flush(view: GoalView, keep?: number): GoalView {
  const step = view.current;
  if (!step) return view;
  const finishing = keep === step.step;
  const printed =
    !step.command && (step.thoughts || finishing)
      ? push(view, { kind: 'step', step: step.step, ...(step.thoughts && { thoughts: step.thoughts }) })
      : view;
  const { current: _gone, ...rest } = printed;
  if (!finishing) return rest;
  const { thoughts: _printed, ...kept } = step;
  return { ...rest, current: kept };
}

/** The view with `files` recorded as the latest touches. */
function withFiles(view: GoalView, files: readonly FileTouch[]): GoalView {
  if (files.length === 0) return view;
  const touched = safeFiles(files);
  const paths = new Set(touched.map((file) => file.path));
  return { ...view, files: [...view.files.filter((file) => !paths.has(file.path)), ...touched] };
}

function safeFiles(files: readonly FileTouch[]): FileTouch[] {
  return files.map((file) => ({ path: untrusted(file.path, 500), change: file.change }));
}

function safeThoughts(thoughts: Thoughts): Thoughts {
  return {
    text: untrusted(thoughts.text, THOUGHT_CHARS),
    reasoning: untrusted(thoughts.reasoning, THOUGHT_CHARS),
    plan: untrusted(thoughts.plan, THOUGHT_CHARS),
    criticism: untrusted(thoughts.criticism, THOUGHT_CHARS),
    speak: untrusted(thoughts.speak, THOUGHT_CHARS),
  };
}

/** One entry of a resumed run's history, as the items it printed when it happened. */
function withHistoryEntry(view: GoalView, entry: HistoryEntry): GoalView {
  if (entry.kind === 'notice')
    return push(view, { kind: 'warning', step: entry.step, message: untrusted(entry.text, 2000) });
  if (entry.kind === 'unusable') {
    const printed = push(view, { kind: 'step', step: entry.step });
    return push(printed, {
      kind: 'outcome',
      step: entry.step,
      outcome: { kind: 'unusable', problem: untrusted(entry.problem, 2000) },
    });
  }
  const command = { name: untrusted(entry.command.name, 200), args: shownArgs(entry.command.args) };
  const printed = push(view, {
    kind: 'step',
    step: entry.step,
    thoughts: safeThoughts(entry.thoughts),
    command,
  });
  const outcome: StepOutcome =
    entry.kind === 'command'
      ? { kind: 'result', ok: entry.ok, output: untrusted(entry.output), files: safeFiles(entry.files) }
      : entry.kind === 'refused'
        ? { kind: 'refused', message: untrusted(entry.message, 2000) }
        : { kind: 'interrupted' };
  const done = push(printed, { kind: 'outcome', step: entry.step, name: command.name, outcome });
  return entry.kind === 'command' ? withFiles(done, entry.files) : done;
}
