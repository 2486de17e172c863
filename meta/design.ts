/**
 * Runs the designer: the meta-autogram `meta/designer.autogram.json`, whose callable node
 * `design(description)` is applied by our own interpreter (AutoGRAMS §5.2). The host side only lends it
 * the `meta` helpers (in the sandbox, for this run only), counts the model calls, turns node events into
 * stage progress, and, when the designer gives up, keeps its partial work (the run's work record, which
 * the helpers fill in) for the user to inspect.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { AgentOpener } from '../src/engine/agent-opener.js';
import type { Interpreter } from '../src/engine/interpreter.js';
import { isUserError, UserError } from '../src/errors.js';
import { EventBus } from '../src/events.js';
import { Interrupted, untilAborted } from '../src/interrupt.js';
import { lintGraph } from '../src/aipl/lint.js';
import { hasErrors } from '../src/graph/lint.js';
import { packageRoot } from '../src/package-root.js';
import { loadGraphFile } from '../src/graph/load.js';
import type { GraphFile } from '../src/graph/schema.js';
import { StaticGraph } from '../src/graph/view.js';
import type { ModelSet } from '../src/llm/types.js';
import { UsageMeter, type UsageTotals } from '../src/llm/usage.js';
import { extractDot } from './dot.js';
import { designerHelpers, repairContext, usableDraft, type DesignRun } from './host.js';
import { DEFAULT_DESIGN_LIMITS, type DesignLimits } from './limits.js';
import type { DotDraft } from './dot-problems.js';
import { saveDesignedGraph, savePartialWork, type SavedGraph } from './output.js';
import { repairNodes } from './repair.js';
import { checkGraph, type CheckFigures } from './check.js';
import { RoundTripTracker } from './round-trips.js';
import { StageTracker } from './stages.js';

/** What to design and where to put it. */
export interface DesignRequest {
  /** What the agent is for, in the user's words. */
  description: string;
  /** The graph's name: the files are `NAME.autogram.json`, `NAME.dot`, `NAME.svg`, `NAME.html`. */
  name: string;
  outDir: string;
  models: ModelSet;
  /** Opens the designer, and the designed agent under `--check` (src/agent's opener). */
  open: AgentOpener;
  /** Receives design.stage, node, model and variable events. */
  events?: EventBus;
  limits?: Partial<DesignLimits>;
  /** The designer graph, when the caller has loaded it already (to show it); else it is loaded here. */
  designer?: StaticGraph;
  /** Simulated conversations to check the design with (`--check N`); none by default. */
  check?: number;
  /**
   * Stops the design (the user pressed Ctrl+C): it ends at once as a failure of the current stage, with
   * the partial work kept. Model calls already sent are left to finish unobserved.
   */
  signal?: AbortSignal;
}

/** The cost of a design run. */
export interface DesignFigures {
  calls: number;
  /** Sequential model round trips: the critical path of the calls. */
  roundTrips: number;
  usage: UsageTotals;
  seconds: number;
  /** True when a scripted model answered: nothing shown is a model's work. */
  scripted: boolean;
}

/** What `--check` found and did. */
export interface CheckSummary extends CheckFigures {
  /** Nodes whose transitions were written again after the classifier got them wrong. */
  repaired: string[];
  /** Nodes that could not be repaired, each with the reason. */
  unrepaired: string[];
}

/** A finished design: the graph, where it was saved, and what the designer worked from. */
export interface DesignSuccess {
  ok: true;
  graph: GraphFile;
  saved: SavedGraph;
  draft: DotDraft;
  outline: string;
  figures: DesignFigures;
  check?: CheckSummary;
}

/** A design the designer gave up on: the stage, why, and the partial work kept on disk. */
export interface DesignFailure {
  ok: false;
  stage: string;
  reason: string;
  /** What to do about it, when the failure was an error that says (an unreachable server, say). */
  hint?: string;
  kept: string[];
  figures: DesignFigures;
  /** The request's signal stopped it, not the designer. */
  interrupted?: boolean;
}

export type DesignOutcome = DesignSuccess | DesignFailure;

/** User replies per simulated conversation in `--check`: enough to walk a few branches deep. */
const CHECK_TURNS = 8;
/** Fixed, so the same design is checked with the same sampled transitions each time. */
const CHECK_SEED = 1;

/**
 * What the designer graph's `design(description)` returns: its verdict. What it made is read from the
 * run's work, which its helpers fill in, not from this value.
 */
const returnedSchema = z.union([
  z.object({ ok: z.literal(true) }),
  z.object({ ok: z.literal(false), stage: z.string(), reason: z.string(), hint: z.string().optional() }),
]);

/** Designs an agent graph from a description. Model failures end in a DesignFailure, not an exception. */
export async function designAgent(request: DesignRequest): Promise<DesignOutcome> {
  const started = performance.now();
  const events = request.events ?? new EventBus();
  const meter = new UsageMeter(events);
  const tracker = new RoundTripTracker();
  const models = tracker.wrapSet(meter.meter(request.models));
  const designer = request.designer ?? (await loadDesigner());
  const stages = new StageTracker(designer, events);
  const run: DesignRun = {
    identity: { name: request.name, description: request.description },
    outDir: request.outDir,
    limits: { ...DEFAULT_DESIGN_LIMITS, ...request.limits },
    model: models.chatbot,
    stages,
    work: {},
  };
  const offStages = stages.follow();
  let interpreter: Interpreter | undefined;

  const figures = (): DesignFigures => ({
    ...tracker.figures(),
    usage: meter.total(),
    seconds: (performance.now() - started) / 1000,
    scripted: Object.values(request.models).some((m) => m.answersFrom === 'rules'),
  });
  const fail = async (
    stage: string,
    reason: string,
    hint?: string,
    interrupted = false,
  ): Promise<DesignFailure> => {
    stages.fail(reason);
    const { work } = run;
    const partial = await savePartialWork(request.outDir, request.name, {
      outline: work.outline,
      dot: partialDot(work.dotAnswer),
      lastAnswer: lastAnswer(run, tracker),
      record: work,
    });
    // A check that fails comes after the graph was saved: that graph is work kept too.
    const kept = work.saved ? [work.saved.graph, ...partial] : partial;
    return {
      ok: false,
      stage,
      reason,
      ...(hint ? { hint } : {}),
      kept,
      figures: figures(),
      ...(interrupted ? { interrupted } : {}),
    };
  };

  const designAndCheck = async (): Promise<DesignOutcome> => {
    interpreter = await request.open({
      graph: designer,
      models,
      events,
      host: { meta: { functions: designerHelpers(run), awaited: true } },
    });
    const { value } = await interpreter.applyFn('design', [request.description]);
    const returned = returnedSchema.safeParse(value);
    if (!returned.success)
      throw new UserError(
        `the designer returned ${JSON.stringify(value)}, not {ok: true} or {ok: false, stage, reason}`,
      );
    if (!returned.data.ok) return await fail(returned.data.stage, returned.data.reason, returned.data.hint);
    const { graph, saved, outline } = run.work;
    const draft = usableDraft(run.work);
    if (!graph || !saved || !draft || outline === undefined)
      throw new UserError('the designer returned ok before it drafted, wrote, assembled and saved a graph');
    const designed = { graph, saved, draft, outline };
    const check = request.check ? await checkDesign(graph, request, run, models) : undefined;
    stages.finish();
    return {
      ok: true,
      ...designed,
      ...(check ? { graph: check.graph, check: check.summary } : {}),
      figures: figures(),
    };
  };

  try {
    return await untilAborted(designAndCheck(), request.signal);
  } catch (error) {
    if (error instanceof Interrupted)
      return await fail(stages.current ?? 'design', 'interrupted', undefined, true);
    // A model that cannot be reached or a node that fails is the designer failing at its current stage.
    if (!isUserError(error)) throw error;
    return await fail(stages.current ?? 'design', error.message, error.hint);
  } finally {
    offStages();
    interpreter?.dispose();
  }
}

/**
 * `--check N`: simulated conversations, then the nodes the classifier got wrong go through the repair
 * pass; the graph is saved again when a repair passes the linter.
 */
async function checkDesign(
  designed: GraphFile,
  request: DesignRequest,
  run: DesignRun,
  models: ModelSet,
): Promise<{ graph: GraphFile; summary: CheckSummary }> {
  const { stages } = run;
  stages.begin('check');
  const checked = await checkGraph(designed, {
    models,
    open: request.open,
    conversations: request.check!,
    turns: CHECK_TURNS,
    seed: CHECK_SEED,
  });
  const { figures } = checked;
  stages.summarize(
    `${figures.edgesCovered}/${figures.edges} edges covered, classifier agreed ${figures.agreed}/${figures.decisions}`,
  );
  if (checked.complaints.length === 0)
    return { graph: designed, summary: { ...figures, repaired: [], unrepaired: [] } };

  stages.begin('repair');
  const repaired = await repairNodes(designed, checked.complaints, repairContext(run));
  const findings = lintGraph(repaired.graph);
  if (hasErrors(findings)) {
    // The repaired graph is worse than the checked one: keep what was saved.
    const reason = `the repaired graph does not lint (${findings[0]!.message}); kept the graph as designed`;
    stages.summarize(reason);
    return { graph: designed, summary: { ...figures, repaired: [], unrepaired: [reason] } };
  }
  await saveDesignedGraph(request.outDir, repaired.graph);
  stages.summarize(`${repaired.repaired.length} nodes written again`);
  return {
    graph: repaired.graph,
    summary: { ...figures, repaired: repaired.repaired, unrepaired: repaired.unrepaired },
  };
}

/** The designer graph, the package's `meta/designer.autogram.json`, read at every run so edits to it take effect. */
export async function loadDesigner(): Promise<StaticGraph> {
  const path = join(packageRoot(), 'meta', 'designer.autogram.json');
  if (!existsSync(path)) throw new UserError(`the designer graph is missing (looked for ${path})`);
  const { file } = await loadGraphFile(path);
  const findings = lintGraph(file);
  if (hasErrors(findings)) {
    const first = findings.find((f) => f.severity === 'error')!;
    throw new UserError(
      `${path}: the designer graph is invalid: ${first.node ? `node "${first.node}": ` : ''}${first.message}`,
      1,
      'fix the designer graph (meta-agent validate shows every finding)',
    );
  }
  return new StaticGraph(file);
}

/** The DOT in the model's last draft answer, or the whole answer when no graph can be found in it. */
function partialDot(answer: string | undefined): string | undefined {
  return answer === undefined ? undefined : `${extractDot(answer) ?? answer}\n`;
}

/** The answers of nodes whose fields failed, else the model's last answer. */
function lastAnswer(run: DesignRun, tracker: RoundTripTracker): string | undefined {
  const failed = (run.work.fields?.failures ?? []).flatMap((line) => {
    const node = /^node (\S+):/.exec(line)?.[1];
    const answer = node === undefined ? undefined : tracker.lastAnswer(`design: fields of ${node}`);
    return answer === undefined ? [] : [`## ${line}\n\n${answer}\n`];
  });
  return failed.length > 0 ? failed.join('\n') : tracker.lastAnswer();
}
