/**
 * A graph that changes while it runs (self-referential mode). Every edit is checked before it applies
 * (schema, names, protected nodes, and any lint error it would introduce), applied atomically and
 * recorded as a new version, so edits can be listed, diffed, undone, saved and resumed elsewhere.
 */
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { InvalidFileError, raiseConfigHint, UserError } from '../errors.js';
import {
  cleanNode,
  diffNodes,
  editRecordSchema,
  graphEditSchema,
  GraphEditError,
  replayRecord,
  type EditRecord,
  type GraphEdit,
  type NodeChange,
} from './edit.js';
import type { Finding } from './lint.js';
import { graphFindings } from './lint-graph.js';
import { closestName } from './names.js';
import type { CompiledNode } from './parse.js';
import { summarizeIssues } from './schema-issues.js';
import {
  graphFileSchema,
  nodeSpecSchema,
  type GraphConfig,
  type GraphFile,
  type NodeSpec,
} from './schema.js';
import { startNodeOf, successors } from './structure.js';
import { compileGraph, type GraphView } from './view.js';

export const HISTORY_FORMAT = 'meta-agent/graph-history@1';

/** The plain-JSON form of a versioned graph: the graph as loaded plus every applied edit. */
export const graphHistorySchema = z.object({
  format: z.literal(HISTORY_FORMAT),
  base: graphFileSchema,
  edits: z.array(editRecordSchema),
});
export type GraphHistoryJSON = z.infer<typeof graphHistorySchema>;

/** Who makes an edit, and which nodes it must not remove or rename (the running node, return points). */
export interface ApplyOptions {
  by: string;
  protect?: ReadonlySet<string>;
}

/** How each version is linted: by src/aipl/lint.ts's lintGraph, or else by the graph's own checks. */
export type GraphLint = (file: GraphFile) => Finding[];

/** Told after every applied edit, with the graph already at the new version. */
export type EditListener = (record: EditRecord, graph: VersionedGraph) => void;

type Change = Pick<EditRecord, 'op' | 'name' | 'before' | 'after' | 'index'>;

const strictNode = nodeSpecSchema.strict();

/** A graph plus its ordered edit history; implements the interpreter's GraphView. */
export class VersionedGraph implements GraphView {
  readonly #base: GraphFile;
  readonly #records: EditRecord[] = [];
  readonly #listeners = new Set<EditListener>();
  readonly #lint: GraphLint;
  #nodes: NodeSpec[];
  #compiled?: { nodes: CompiledNode[]; byName: Map<string, CompiledNode> };
  #findings?: Finding[];
  /** The current nodes' size as JSON, in characters, once an edit needed it. */
  #size?: number;

  constructor(base: GraphFile, lint: GraphLint = graphFindings) {
    this.#base = structuredClone({ ...base, nodes: base.nodes.map(cleanNode) });
    this.#nodes = this.#base.nodes;
    this.#lint = lint;
  }

  get name(): string {
    return this.#base.name;
  }

  get config(): GraphConfig {
    return this.#base.config;
  }

  get version(): number {
    return this.#records.length;
  }

  get(name: string): CompiledNode | undefined {
    return this.#compile().byName.get(name);
  }

  nodes(): readonly CompiledNode[] {
    return this.#compile().nodes;
  }

  /** Lint findings of the current version. */
  lint(): readonly Finding[] {
    this.#findings ??= this.#lint({ ...this.#base, nodes: this.#nodes });
    return this.#findings;
  }

  /** Subscribes to applied edits; returns the function that unsubscribes. */
  onEdit(listener: EditListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Validates and applies one edit as version N+1. Throws GraphEditError, leaving the graph untouched,
   * when the edit is malformed or would break the graph. Returns null for an edit that changes nothing.
   */
  apply(edit: GraphEdit | unknown, options: ApplyOptions): EditRecord | null {
    const parsed = graphEditSchema.safeParse(edit);
    if (!parsed.success) throw new GraphEditError(`invalid edit: ${summarizeIssues(parsed.error, edit)}`);
    const protect = options.protect ?? new Set<string>();
    const e = parsed.data;
    if (e.op === 'add') return this.#commit(this.#planAdd(e.node), options.by);
    if (e.op === 'remove') return this.#commit(this.#planRemove(e.name, protect), options.by);
    if (e.op === 'update') return this.#commit(this.#planUpdate(e.name, e.patch, protect), options.by);
    return this.#commit(this.#planAddTransition(e.from, e.to, e.choice), options.by);
  }

  /** Undoes the edit that made `version`, as a new version. Refused when a later edit changed that node. */
  revert(version: number, by: string, options: { protect?: ReadonlySet<string> } = {}): EditRecord {
    const record = this.#records[version - 1];
    if (!record) throw new UserError(`no version ${version} to revert; edits run 1 to ${this.version}`, 2);
    const refuse = (why: string): never => {
      throw new GraphEditError(`cannot revert version ${version}: ${why}`);
    };
    const protect = options.protect ?? new Set<string>();
    let change: Change;
    if (record.after) {
      const index = this.#indexOf(record.after.name);
      if (index < 0) refuse(`node "${record.after.name}" no longer exists`);
      const later = this.#records.slice(version).find((r) => r.name === record.after!.name);
      if (!isDeepStrictEqual(this.#nodes[index], record.after))
        refuse(
          `node "${record.after.name}" changed again${later ? ` in version ${later.version}` : ''}; revert that first`,
        );
      if (record.before === null || record.before.name !== record.after.name)
        this.#checkDetachable(record.after.name, protect, `cannot revert version ${version}`);
      change = { op: 'revert', name: record.name, before: record.after, after: record.before, index };
    } else {
      if (this.#indexOf(record.before!.name) >= 0)
        refuse(`a node named "${record.before!.name}" exists again`);
      const index = Math.min(record.index, this.#nodes.length);
      change = { op: 'revert', name: record.name, before: null, after: record.before, index };
    }
    return this.#commit(change, by, version)!;
  }

  /** The applied edits, oldest first. */
  history(): readonly EditRecord[] {
    return structuredClone(this.#records);
  }

  /** The graph file as it was at `version` (0: as loaded). */
  fileAt(version: number): GraphFile {
    if (!Number.isInteger(version) || version < 0 || version > this.version)
      throw new UserError(`no version ${version}; this graph has versions 0 to ${this.version}`, 2);
    const nodes = this.#records.slice(0, version).reduce(replayRecord, this.#base.nodes);
    return structuredClone({ ...this.#base, nodes });
  }

  /** Node-level differences from version `a` to version `b`. */
  diff(a: number, b: number): NodeChange[] {
    return diffNodes(this.fileAt(a).nodes, this.fileAt(b).nodes);
  }

  /** A copy of the node's fields as a graph file stores them; undefined when there is no such node. */
  spec(name: string): NodeSpec | undefined {
    const index = this.#indexOf(name);
    return index < 0 ? undefined : structuredClone(this.#nodes[index]);
  }

  /** The current graph as a file. */
  toFile(): GraphFile {
    return structuredClone({ ...this.#base, nodes: this.#nodes });
  }

  /** Plain JSON that `fromJSON` turns back into an equal graph, history included. */
  toJSON(): GraphHistoryJSON {
    return structuredClone({ format: HISTORY_FORMAT, base: this.#base, edits: this.#records });
  }

  /**
   * Rebuilds a graph saved with `toJSON`; `source` names it in messages. `config` replaces the saved
   * config: edits change nodes only, so a resumed run may take its config from the file as it is now.
   */
  static fromJSON(
    json: unknown,
    source = 'graph history',
    config?: GraphConfig,
    lint?: GraphLint,
  ): VersionedGraph {
    const parsed = graphHistorySchema.safeParse(json);
    if (!parsed.success)
      throw new InvalidFileError(
        `${source}: not a valid graph history: ${summarizeIssues(parsed.error, json)}`,
      );
    const { base } = parsed.data;
    const graph = new VersionedGraph(config ? { ...base, config } : base, lint);
    parsed.data.edits.forEach((record, i) => {
      if (record.version !== i + 1)
        throw new InvalidFileError(`${source}: graph history is out of order at version ${record.version}`);
      graph.#nodes = replayRecord(graph.#nodes, record);
      graph.#records.push(cleanRecord(record));
    });
    return graph;
  }

  #planAdd(raw: Record<string, unknown>): Change {
    const node = parseNode(
      raw,
      typeof raw.name === 'string' ? `cannot add node "${raw.name}"` : 'cannot add node',
    );
    if (this.#indexOf(node.name) >= 0)
      throw new GraphEditError(
        `cannot add node "${node.name}": a node with that name already exists`,
        'update it instead',
      );
    const max = this.config.selfEditLimits.maxNodes;
    if (this.#nodes.length >= max)
      throw new GraphEditError(
        `cannot add node "${node.name}": the graph already has ${this.#nodes.length} nodes (config.selfEditLimits.maxNodes is ${max})`,
        `remove nodes it no longer needs, or ${raiseConfigHint('selfEditLimits.maxNodes')}`,
      );
    return { op: 'add', name: node.name, before: null, after: node, index: this.#nodes.length };
  }

  #planUpdate(name: string, patch: Record<string, unknown>, protect: ReadonlySet<string>): Change {
    const index = this.#requireNode(name, 'cannot update');
    const before = this.#nodes[index]!;
    const after = parseNode({ ...before, ...patch }, `cannot update node "${name}"`);
    if (after.name !== name) {
      if (this.#indexOf(after.name) >= 0)
        throw new GraphEditError(`cannot rename "${name}" to "${after.name}": that name is taken`);
      this.#checkDetachable(name, protect, `cannot rename "${name}"`);
    }
    return { op: 'update', name, before, after, index };
  }

  #planRemove(name: string, protect: ReadonlySet<string>): Change {
    const index = this.#requireNode(name, 'cannot remove');
    if (this.#nodes.length === 1) throw new GraphEditError(`cannot remove "${name}": it is the only node`);
    this.#checkDetachable(name, protect, `cannot remove "${name}"`);
    return { op: 'remove', name, before: this.#nodes[index]!, after: null, index };
  }

  #planAddTransition(from: string, to: string, choice: string | undefined): Change {
    const index = this.#requireNode(from, 'cannot add a transition from');
    const before = this.#nodes[index]!;
    const asks = Boolean(before.transitionQuestion?.trim());
    if (asks && choice === undefined)
      throw new GraphEditError(
        `cannot add a transition from "${from}" to "${to}": "${from}" asks a transition question, so the new transition needs its choice`,
      );
    const after: NodeSpec = { ...before, transitions: [...before.transitions, to] };
    if (choice !== undefined) after.transitionChoices = [...before.transitionChoices, choice];
    return { op: 'add-transition', name: from, before, after, index };
  }

  /** Refuses to take a node out of reach: protected, the start node, or still a transition target. */
  #checkDetachable(name: string, protect: ReadonlySet<string>, refused: string): void {
    if (protect.has(name))
      throw new GraphEditError(`${refused}: it is running, or a function call returns to it`);
    if (startNodeOf({ config: this.config, nodes: this.#nodes }) === name)
      throw new GraphEditError(`${refused}: it is the start node`);
    const referrers = this.#referrersOf(name);
    if (referrers.length > 0)
      throw new GraphEditError(
        `${refused}: ${referrers.map((r) => `"${r}"`).join(', ')} still lead${referrers.length === 1 ? 's' : ''} to it`,
        'change their transitions first',
      );
  }

  #referrersOf(name: string): string[] {
    const has = (n: string): boolean => this.#indexOf(n) >= 0;
    const target = this.get(name);
    return this.nodes()
      .filter((n) => n.name !== name)
      .filter((n) => successors(n, has).includes(name) || (n.call && n.call.fn === target?.callable?.fn))
      .map((n) => n.name);
  }

  #commit(change: Change, by: string, reverts?: number): EditRecord | null {
    if (isDeepStrictEqual(change.before, change.after)) return null;
    const size = this.#sizeAfter(change);
    const nodes = replayRecord(this.#nodes, change);
    const findings = this.#lint({ ...this.#base, nodes });
    const introduced = newErrors(this.lint(), findings);
    if (introduced.length > 0) {
      const listed = introduced
        .slice(0, 3)
        .map((f) => (f.node ? `${f.node}: ${f.message}` : f.message))
        .join('; ');
      throw new GraphEditError(`${describe(change)} refused: ${listed}`, introduced[0]!.hint, introduced);
    }
    const record: EditRecord = {
      version: this.version + 1,
      at: new Date().toISOString(),
      by,
      ...change,
      ...(reverts === undefined ? {} : { reverts }),
    };
    this.#records.push(record);
    this.#nodes = nodes;
    this.#size = size;
    this.#compiled = undefined;
    // The new version's findings were just computed: the next edit compares against them.
    this.#findings = findings;
    for (const listener of this.#listeners) listener(structuredClone(record), this);
    return structuredClone(record);
  }

  /**
   * The graph's size after `change`, refusing a node or a graph larger than selfEditLimits allows: every
   * version is kept in the history and saved with the conversation, so one runaway edit would make a
   * state too large to save or resume. An edit that shrinks the graph is always allowed.
   */
  #sizeAfter(change: Change): number {
    const { maxNodeChars, maxGraphChars } = this.config.selfEditLimits;
    const before = change.before ? JSON.stringify(change.before).length : 0;
    const after = change.after ? JSON.stringify(change.after).length : 0;
    const hint = (field: string) =>
      `keep long text in variables, which the graph does not store, or ${raiseConfigHint(`selfEditLimits.${field}`)}`;
    if (after > maxNodeChars && after > before)
      throw new GraphEditError(
        `${describe(change)} refused: the node would take ${after} characters, more than config.selfEditLimits.maxNodeChars (${maxNodeChars})`,
        hint('maxNodeChars'),
      );
    this.#size ??= JSON.stringify(this.#nodes).length;
    const size = this.#size - before + after;
    if (size > maxGraphChars && after > before)
      throw new GraphEditError(
        `${describe(change)} refused: the graph would take ${size} characters, more than config.selfEditLimits.maxGraphChars (${maxGraphChars})`,
        hint('maxGraphChars'),
      );
    return size;
  }

  #requireNode(name: string, refused: string): number {
    const index = this.#indexOf(name);
    if (index < 0) {
      const near = closestName(
        name,
        this.#nodes.map((n) => n.name),
      );
      throw new GraphEditError(
        `${refused} "${name}": no such node`,
        near ? `did you mean "${near}"?` : undefined,
      );
    }
    return index;
  }

  #indexOf(name: string): number {
    return this.#nodes.findIndex((n) => n.name === name);
  }

  #compile(): { nodes: CompiledNode[]; byName: Map<string, CompiledNode> } {
    if (!this.#compiled) {
      const { nodes } = compileGraph(this.toFile());
      this.#compiled = { nodes, byName: new Map(nodes.map((n) => [n.name, n])) };
    }
    return this.#compiled;
  }
}

function parseNode(raw: Record<string, unknown>, refused: string): NodeSpec {
  const parsed = strictNode.safeParse(raw);
  if (!parsed.success) throw new GraphEditError(`${refused}: ${summarizeIssues(parsed.error, raw)}`);
  return cleanNode(parsed.data);
}

function cleanRecord(record: EditRecord): EditRecord {
  return {
    ...record,
    before: record.before && cleanNode(record.before),
    after: record.after && cleanNode(record.after),
  };
}

/** Errors in `after` that `before` did not have (counted, so a second copy of an old error is new). */
function newErrors(before: readonly Finding[], after: readonly Finding[]): Finding[] {
  const key = (f: Finding): string => `${f.node ?? ''}\u0000${f.message}`;
  const existing = new Map<string, number>();
  for (const f of before) if (f.severity === 'error') existing.set(key(f), (existing.get(key(f)) ?? 0) + 1);
  return after.filter((f) => {
    if (f.severity !== 'error') return false;
    const left = existing.get(key(f)) ?? 0;
    existing.set(key(f), left - 1);
    return left <= 0;
  });
}

function describe(change: Change): string {
  if (change.op === 'add') return `adding node "${change.name}"`;
  if (change.op === 'remove') return `removing node "${change.name}"`;
  if (change.op === 'add-transition') return `adding a transition from "${change.name}"`;
  if (change.op === 'revert') return `reverting node "${change.name}"`;
  return `updating node "${change.name}"`;
}
