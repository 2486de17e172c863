/**
 * The `self` API: the functions code nodes of a self-referential run call to read and rewrite the graph
 * they are running (paper §5.3, Appendix H: `self.add_node(…)`). They are synchronous host functions lent
 * to the sandbox; every edit goes through VersionedGraph.apply, so it is validated, atomic and recorded.
 *
 * Inside the sandbox, `self` offers:
 * - `self.addNode(fields)`: adds a node (`{ name, action, instruction?, transitions?, … }`, the fields of a
 *   graph file's node); returns its name.
 * - `self.updateNode(name, patch)`: changes some fields of a node (a new `name` renames it); returns the
 *   node's name afterwards.
 * - `self.removeNode(name)`: removes a node nothing leads to any more.
 * - `self.addTransition(from, to, choice?)`: appends a transition (and, when `from` asks a transition
 *   question, the answer that picks it).
 * - `self.getNode(name)`: the node's fields, as a graph file stores them.
 * - `self.nodes()`: `[{ name, action }]` of every node, in file order.
 * - `self.hasNode(name)`: whether a node of that name exists.
 * - `self.isValidName(name)`: whether `name` passes the graph's node-name rules (whatever its use).
 * - `self.lastReply()`: `{ node, text }` of the last chat reply of the conversation, or null.
 *
 * A refused edit throws an `Error` inside the sandbox that the code may catch; the graph is untouched.
 */
import { raiseConfigHint, UserError } from '../errors.js';
import { nodeNameProblem } from '../graph/names.js';
import { compileNode } from '../graph/parse.js';
import { kindOf } from '../graph/schema-issues.js';
import type { NodeSpec } from '../graph/schema.js';
import type { GraphEdit } from '../graph/edit.js';
import type { VersionedGraph } from '../graph/versioned.js';
import type { HostFunction } from '../sandbox/index.js';

/** What the API needs to know about the run whose code is calling it. */
export interface SelfCaller {
  /** The node whose code runs: recorded as the author of its edits. */
  node: string;
  /** Nodes an edit must not remove or rename: the running node and the nodes calls return to. */
  protect: readonly string[];
  /** The last chat reply of the conversation, and the node that gave it. */
  lastReply: { node: string; text: string } | null;
}

/** Counts a turn's edits against `config.selfEditLimits.editsPerTurn`. */
export class EditBudget {
  #spent = 0;

  constructor(readonly perTurn: number) {}

  /** A new turn (a reply or a function call from the host) starts with no edits spent. */
  reset(): void {
    this.#spent = 0;
  }

  /**
   * Counts one edit, refused or not (an agent retrying a refused edit in a loop is editing without end
   * too), and refuses it once the turn has made its allowance.
   */
  spend(what: string): void {
    if (this.#spent >= this.perTurn)
      throw new UserError(
        `${what} refused: this turn already tried ${this.#spent} edits, the most config.selfEditLimits.editsPerTurn allows; ` +
          'the agent seems to edit without end',
        1,
        `if it really needs more edits per turn, ${raiseConfigHint('selfEditLimits.editsPerTurn')}`,
      );
    this.#spent += 1;
  }
}

/**
 * The `self` functions over `graph`. `caller` is asked at every call, since the API outlives any one
 * node; it answers undefined when no run is in progress (edits and lastReply are then refused).
 */
export function selfApi(
  graph: VersionedGraph,
  budget: EditBudget,
  caller: () => SelfCaller | undefined,
): Record<string, HostFunction> {
  const running = (what: string): SelfCaller => {
    const found = caller();
    if (!found)
      throw new UserError(`${what}: no node of the graph is running (self serves the run's own code)`);
    return found;
  };
  const edit = (what: string, change: GraphEdit): void => {
    const { node, protect } = running(what);
    budget.spend(what);
    try {
      graph.apply(change, { by: node, protect: new Set(protect) });
    } catch (error) {
      // Only the message crosses into the sandbox, so the hint (what to do) must travel inside it.
      if (error instanceof UserError && error.hint) throw new UserError(`${error.message} (${error.hint})`);
      throw error;
    }
  };

  return {
    addNode(fields: unknown): string {
      const node = requireFields(fields, 'self.addNode(fields)');
      edit('self.addNode', { op: 'add', node: node as NodeSpec });
      return node.name as string;
    },
    updateNode(name: unknown, patch: unknown): string {
      const target = requireName(name, 'self.updateNode(name, patch)');
      const fields = requireObject(patch, 'self.updateNode(name, patch)', 'patch');
      edit('self.updateNode', { op: 'update', name: target, patch: fields });
      return typeof fields.name === 'string' ? fields.name : target;
    },
    removeNode(name: unknown): void {
      edit('self.removeNode', { op: 'remove', name: requireName(name, 'self.removeNode(name)') });
    },
    addTransition(from: unknown, to: unknown, choice?: unknown): void {
      const usage = 'self.addTransition(from, to, choice?)';
      if (choice !== undefined && typeof choice !== 'string')
        throw new UserError(`${usage}: choice must be a string (the answer that picks the transition)`);
      const change: GraphEdit = {
        op: 'add-transition',
        from: requireName(from, usage, 'from'),
        to: requireName(to, usage, 'to'),
        ...(choice === undefined ? {} : { choice }),
      };
      edit('self.addTransition', change);
    },
    getNode(name: unknown): NodeSpec {
      const wanted = requireName(name, 'self.getNode(name)');
      const node = graph.spec(wanted);
      if (!node)
        throw new UserError(`self.getNode: no node "${wanted}" (self.hasNode tells whether one exists)`);
      return node;
    },
    nodes(): { name: string; action: string }[] {
      return graph.nodes().map((n) => ({ name: n.name, action: n.action }));
    },
    hasNode(name: unknown): boolean {
      return typeof name === 'string' && graph.get(name) !== undefined;
    },
    isValidName(name: unknown): boolean {
      return typeof name === 'string' && isValidNodeName(name);
    },
    lastReply(): { node: string; text: string } | null {
      return running('self.lastReply').lastReply;
    },
  };
}

/**
 * The graph's rules for a node name: not empty, nothing a transition string would read otherwise
 * (`quit`, `$x`, `p.*`, commas…), and a well-formed `f(a, b)` when it has parentheses.
 */
export function isValidNodeName(name: string): boolean {
  if (name === '' || nodeNameProblem(name) !== undefined) return false;
  const { problems } = compileNode({ ...PROBE, name });
  return !problems.some((p) => p.field === 'name');
}

/** A node that only carries a name, for the parser's name checks. */
const PROBE: NodeSpec = {
  name: '',
  action: 'transition',
  instruction: '',
  transitions: [],
  transitionChoices: [],
  userInstructions: [],
};

function requireObject(value: unknown, usage: string, what: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new UserError(`${usage}: ${what} must be an object of node fields, got ${kindOf(value)}`);
  return value as Record<string, unknown>;
}

function requireFields(value: unknown, usage: string): Record<string, unknown> {
  const fields = requireObject(value, usage, 'fields');
  if (typeof fields.name !== 'string')
    throw new UserError(
      `${usage}: fields need a string "name" (e.g. { name: "greet", action: "chat", instruction: "…", transitions: ["ask"] })`,
    );
  return fields;
}

function requireName(value: unknown, usage: string, what = 'name'): string {
  if (typeof value !== 'string')
    throw new UserError(`${usage}: ${what} must be a node name, got ${kindOf(value)}`);
  return value;
}
