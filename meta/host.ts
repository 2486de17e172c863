/**
 * The `meta` object the designer graph's code nodes call. Each helper checks what the graph hands it
 * (the designer is a graph anyone may edit, so a wrong argument is reported, not trusted), does one
 * job, and records what it produced in the run so a failed design can still show its partial work.
 */
import { z } from 'zod';
import { UserError } from '../src/errors.js';
import { lintGraph, MAX_CHOICES } from '../src/graph/lint.js';
import { graphFileSchema, type GraphFile } from '../src/graph/schema.js';
import type { LanguageModel } from '../src/llm/types.js';
import { assembleGraph, type GraphIdentity } from './assemble.js';
import { parseDotAnswer } from './dot.js';
import { nodeBriefs, nodeFieldsSchema, type DotDraft, type NodeFields } from './node-fields.js';
import { saveDesignedGraph, type SavedGraph } from './output.js';
import type { DesignLimits } from './limits.js';
import { repairNodes, type RepairContext } from './repair.js';
import type { StageTracker } from './stages.js';
import { writeNodeFields } from './write-fields.js';

/** What a design run knows and has made so far; the helpers fill it in as the designer goes. */
export interface DesignRun {
  identity: GraphIdentity;
  outDir: string;
  limits: DesignLimits;
  /** The chatbot, wrapped so its calls are counted. */
  model: LanguageModel;
  stages: StageTracker;
  /** The last usable DOT draft. */
  draft?: DotDraft;
  outline?: string;
  /** The graph as last assembled or repaired. */
  graph?: GraphFile;
  /** Where the graph was saved. */
  saved?: SavedGraph;
  /** Nodes whose fields could not be written, each with the reason. */
  failedNodes: string[];
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

    parseDot: async (answer: unknown) => {
      const parsed = await parseDotAnswer(text(answer, 'parseDot(answer)'), limits);
      parsed.problems.push(...branchingProblems(parsed));
      if (parsed.problems.length === 0) {
        run.draft = parsed;
        run.stages.summarize(`${parsed.nodes.length} nodes, ${parsed.edges.length} edges`);
      }
      return parsed;
    },

    writeNodeFields: async (dot: unknown, outline: unknown, description: unknown) => {
      const draft = checked(draftSchema, dot, 'writeNodeFields(dot)');
      run.outline = text(outline, 'writeNodeFields(outline)');
      const written = await writeNodeFields(
        draft,
        { description: text(description, 'writeNodeFields(description)'), outline: run.outline },
        {
          model: run.model,
          concurrency: limits.concurrency,
          tries: limits.fieldTries,
          onProgress: (done, total) => run.stages.progress(`${done}/${total} nodes`),
        },
      );
      run.failedNodes = written.failures;
      if (written.failures.length === 0) run.stages.summarize(`${draft.nodes.length} nodes written`);
      return written;
    },

    assemble: (dot: unknown, fields: unknown) => {
      const draft = checked(draftSchema, dot, 'assemble(dot)');
      run.graph = assembleGraph(draft, checkedFields(draft, fields), run.identity);
      return run.graph;
    },

    lint: (graph: unknown): DesignFinding[] => {
      const findings = lintGraph(checked(graphFileSchema, graph, 'lint(graph)')).map((f) => ({
        ...(f.node ? { node: f.node } : {}),
        text: `${f.node ? `node ${f.node}: ` : ''}${f.message}${f.hint ? ` (${f.hint})` : ''}`,
      }));
      run.stages.summarize(findings.length === 0 ? 'no findings' : `${findings.length} findings`);
      return findings;
    },

    repair: async (graph: unknown, findings: unknown) => {
      const context = repairContext(run);
      const complaints = checked(findingsSchema, findings, 'repair(findings)').flatMap((f) =>
        f.node ? [{ node: f.node, problem: f.text }] : [],
      );
      const result = await repairNodes(checked(graphFileSchema, graph, 'repair(graph)'), complaints, context);
      run.graph = result.graph;
      run.stages.summarize(`${result.repaired.length} nodes written again`);
      return result.graph;
    },

    save: async (graph: unknown) => {
      const file = checked(graphFileSchema, graph, 'save(graph)');
      run.graph = file;
      run.saved = await saveDesignedGraph(run.outDir, file);
      run.stages.summarize(run.saved.graph);
      return { ok: true, path: run.saved.graph };
    },
  };
}

/**
 * What the repair pass needs from a run: the draft and outline its nodes were written from, and how to
 * call the model. Refused before the designer has parsed a draft and written its fields.
 */
export function repairContext(run: DesignRun): RepairContext {
  if (!run.draft || run.outline === undefined)
    throw new UserError('meta.repair: the designer must parse a draft and write its fields before repairing');
  return {
    draft: run.draft,
    description: run.identity.description,
    outline: run.outline,
    model: run.model,
    concurrency: run.limits.concurrency,
    tries: run.limits.fieldTries,
  };
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
