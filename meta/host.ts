/**
 * The `meta` object the designer graph's code nodes call. Each helper checks what the graph hands it
 * (the designer is a graph anyone may edit, so a wrong argument is reported, not trusted), does one
 * job, and records what it produced in the run's work, which a failed design keeps as its partial work.
 */
import { z } from 'zod';
import { UserError } from '../src/errors.js';
import { lintGraph } from '../src/aipl/lint.js';
import { MAX_CHOICES } from '../src/graph/lint-transitions.js';
import { graphFileSchema, type GraphFile } from '../src/graph/schema.js';
import type { LanguageModel } from '../src/llm/types.js';
import { assembleGraph, type GraphIdentity } from './assemble.js';
import type { DotDraft } from './dot-problems.js';
import { parseDotAnswer, type ParsedDot } from './dot.js';
import { withEnding, type EndedDraft } from './ending.js';
import { nodeBriefs, nodeFieldsSchema, type NodeFields } from './node-fields.js';
import { saveDesignedGraph, type SavedGraph } from './output.js';
import type { DesignLimits } from './limits.js';
import { repairNodes, type RepairContext } from './repair.js';
import type { StageTracker } from './stages.js';
import { writeNodeFields, type WrittenFields } from './write-fields.js';

/** What a design run knows: its bounds and tools, and the one record of what it has made. */
export interface DesignRun {
  identity: GraphIdentity;
  outDir: string;
  limits: DesignLimits;
  /** The chatbot, wrapped so its calls are counted. */
  model: LanguageModel;
  stages: StageTracker;
  work: DesignWork;
}

/**
 * What the designer has made so far, recorded by the helpers as they make it. The host reads a
 * design's products here and only here: the graph's return value is its verdict, and its variables
 * are its own working memory (shown as they change, never read back).
 */
export interface DesignWork {
  /** The outline the DOT drafts are drawn from. */
  outline?: string;
  /** The model's last DOT answer, as it wrote it. */
  dotAnswer?: string;
  /** That answer as parsed, with the problems that stand in its way (none: a usable draft). */
  dot?: ParsedDot;
  /** Every node's fields, or the reasons some could not be written. */
  fields?: WrittenFields;
  /** The graph as last assembled or repaired, and what its last lint found. */
  graph?: GraphFile;
  findings?: DesignFinding[];
  /** Where the graph was saved. */
  saved?: SavedGraph;
}

/** A lint finding as the designer graph sees it: the node it names (if any) and one line of text. */
export interface DesignFinding {
  node?: string;
  text: string;
}

const draftSchema = z.object({
  nodes: z.array(z.object({ id: z.string(), label: z.string() })),
  edges: z.array(z.object({ from: z.string(), to: z.string(), label: z.string() })),
  start: z.string().optional(),
});

const findingsSchema = z.array(z.object({ node: z.string().optional(), text: z.string() }));

/** The helpers, by the names the designer graph calls them (`meta.parseDot(…)`). */
export function designerHelpers(run: DesignRun) {
  const { limits } = run;
  return {
    limits: () => ({ ...limits }),
    retry: (reason: unknown) => run.stages.retry(String(reason)),

    keepOutline: (outline: unknown) => {
      run.work.outline = text(outline, 'keepOutline(outline)');
    },

    parseDot: async (answer: unknown) => {
      run.work.dotAnswer = text(answer, 'parseDot(answer)');
      const parsed = await parseDotAnswer(run.work.dotAnswer, limits);
      parsed.problems.push(...branchingProblems(parsed));
      if (parsed.problems.length > 0) {
        run.work.dot = parsed;
        return parsed;
      }
      // A usable draft is what the rest of the design is built from, so it is completed here, once.
      const ended = withEnding(parsed);
      run.work.dot = { ...ended.draft, problems: [] };
      run.stages.summarize(`${parsed.nodes.length} nodes, ${parsed.edges.length} edges${endingAdded(ended)}`);
      return run.work.dot;
    },

    writeNodeFields: async (dot: unknown) => {
      const draft = checked(draftSchema, dot, 'writeNodeFields(dot)');
      const outline = keptOutline(run, 'writeNodeFields');
      const written = await writeNodeFields(
        draft,
        { description: run.identity.description, outline },
        {
          model: run.model,
          concurrency: limits.concurrency,
          tries: limits.fieldTries,
          onProgress: (done, total) => run.stages.progress(`${done}/${total} nodes`),
        },
      );
      run.work.fields = written;
      if (written.failures.length === 0) run.stages.summarize(`${draft.nodes.length} nodes written`);
      return written;
    },

    assemble: (dot: unknown, fields: unknown) => {
      const draft = checked(draftSchema, dot, 'assemble(dot)');
      run.work.graph = assembleGraph(draft, checkedFields(draft, fields), run.identity);
      return run.work.graph;
    },

    lint: (graph: unknown): DesignFinding[] => {
      const findings = lintGraph(checked(graphFileSchema, graph, 'lint(graph)')).map((f) => ({
        ...(f.node ? { node: f.node } : {}),
        text: `${f.node ? `node ${f.node}: ` : ''}${f.message}${f.hint ? ` (${f.hint})` : ''}`,
      }));
      run.work.findings = findings;
      run.stages.summarize(findings.length === 0 ? 'no findings' : `${findings.length} findings`);
      return findings;
    },

    repair: async (graph: unknown, findings: unknown) => {
      const context = repairContext(run);
      const complaints = checked(findingsSchema, findings, 'repair(findings)').flatMap((f) =>
        f.node ? [{ node: f.node, problem: f.text }] : [],
      );
      const result = await repairNodes(checked(graphFileSchema, graph, 'repair(graph)'), complaints, context);
      run.work.graph = result.graph;
      run.stages.summarize(`${result.repaired.length} nodes written again`);
      return result.graph;
    },

    save: async (graph: unknown) => {
      const file = checked(graphFileSchema, graph, 'save(graph)');
      run.work.graph = file;
      run.work.saved = await saveDesignedGraph(run.outDir, file);
      run.stages.summarize(run.work.saved.graph);
      return { ok: true, path: run.work.saved.graph };
    },
  };
}

/**
 * What the repair pass needs from a run: the draft and outline its nodes were written from, and how to
 * call the model. Refused before the designer has parsed a usable draft and kept its outline.
 */
export function repairContext(run: DesignRun): RepairContext {
  const draft = usableDraft(run.work);
  if (!draft) throw new UserError('meta.repair: the designer must parse a usable draft before repairing');
  return {
    draft,
    description: run.identity.description,
    outline: keptOutline(run, 'repair'),
    model: run.model,
    concurrency: run.limits.concurrency,
    tries: run.limits.fieldTries,
  };
}

/** The last DOT draft parsed, when it has no problems. */
export function usableDraft(work: DesignWork): DotDraft | undefined {
  return work.dot && work.dot.problems.length === 0 ? work.dot : undefined;
}

function keptOutline(run: DesignRun, helper: string): string {
  if (run.work.outline === undefined)
    throw new UserError(`meta.${helper}: the designer must keep its outline first (meta.keepOutline)`);
  return run.work.outline;
}

/** What the summary says was added for the conversation to end, if anything. */
function endingAdded({ closing, addedNode, addedEdges }: EndedDraft): string {
  const edges = `${addedEdges} ${addedEdges === 1 ? 'edge' : 'edges'}`;
  if (addedNode) return addedEdges > 0 ? `; added ${closing} and ${edges} to it` : `; added ${closing}`;
  return addedEdges > 0 ? `; added ${edges} to ${closing}` : '';
}

/**
 * A node's ways out become the answers of one multiple-choice question, lettered A–Z: more than that
 * is a drawing problem (merge similar replies), which no rewriting of the node's fields could fix.
 */
function branchingProblems(draft: DotDraft): string[] {
  return draft.nodes.flatMap((node) => {
    const ways = draft.edges.filter((e) => e.from === node.id).length;
    return ways > MAX_CHOICES
      ? [
          `node ${node.id} has ${ways} outgoing edges, more than ${MAX_CHOICES}: merge similar user replies into one edge`,
        ]
      : [];
  });
}

/** Validates each node's fields against that node's schema, so assembly sees only complete nodes. */
function checkedFields(draft: DotDraft, fields: unknown): NodeFields[] {
  const briefs = nodeBriefs(draft);
  const list = checked(z.array(z.unknown()).length(briefs.length), fields, 'assemble(fields)');
  return list.map((value, i) => checked(nodeFieldsSchema(briefs[i]!), value, `assemble(fields[${i}])`));
}

function checked<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue?.path.length ? ` at ${issue.path.join('.')}` : '';
  throw new UserError(`meta.${where}: unexpected value${path}: ${issue?.message ?? 'invalid'}`);
}

function text(value: unknown, where: string): string {
  if (typeof value !== 'string') throw new UserError(`meta.${where}: expected text, got ${typeof value}`);
  return value;
}
