/**
 * Temporary changes to a flow during a pass (seed 003, §2.2): nodes and edges added, edges removed,
 * nodes skipped to reuse their last output. A change is refused when it touches a node whose inputs are
 * fixed (it ran in the pass, or runs before the asking node), or would close a cycle; accepted changes
 * last until the pass ends.
 * Everything here is pure: a structure goes in, a new one (or the reason for refusing) comes out.
 */
import { describeCycle, findCycle, type FlowShape } from './dag.js';
import type { FlowFile, FlowNode } from './schema.js';

/** One temporary change, as recorded in the run state and replayed on resume. */
export type FlowChange =
  | { op: 'add-node'; node: FlowNode }
  | { op: 'add-edge'; from: string; to: string }
  | { op: 'remove-edge'; from: string; to: string }
  | { op: 'skip'; node: string };

/** The flow as a pass sees it: its nodes (file order, then added ones), their dependencies, the skips. */
export interface PassStructure extends FlowShape {
  nodes: ReadonlyMap<string, FlowNode>;
  skips: ReadonlySet<string>;
}

/** What a change may not touch, and what it may reuse. */
export interface ChangeLimits {
  /** Why the node's inputs can no longer change (it ran in this pass, or runs now), or undefined. */
  fixed(node: string): string | undefined;
  /** Has an output from an earlier pass that a skip can reuse. */
  reusable(node: string): boolean;
}

/** The flow file's own structure, with no changes. */
export function baseStructure(flow: FlowFile): PassStructure {
  return {
    nodes: new Map(flow.nodes.map((node) => [node.name, node])),
    order: flow.nodes.map((node) => node.name),
    dependencies: new Map(flow.nodes.map((node) => [node.name, [...node.dependencies]])),
    after: new Map(flow.nodes.map((node) => [node.name, [...node.after]])),
    skips: new Set(),
  };
}

/** Why `change` cannot be made to `structure`, or undefined when it can. */
export function refusal(
  structure: PassStructure,
  change: FlowChange,
  limits: ChangeLimits,
): string | undefined {
  const has = (name: string) => structure.nodes.has(name);
  const missing = (name: string) => `the flow has no node "${name}"`;
  const fixed = (name: string) => {
    const why = limits.fixed(name);
    return why && `${why}; its inputs cannot change`;
  };
  switch (change.op) {
    case 'add-node': {
      const { name, dependencies, after } = change.node;
      if (has(name)) return `the flow already has a node "${name}"`;
      const unknown = [...dependencies, ...after].find((dep) => !has(dep));
      return unknown === undefined ? undefined : missing(unknown);
    }
    case 'add-edge':
    case 'remove-edge': {
      const { from, to } = change;
      if (!has(from)) return missing(from);
      if (!has(to)) return missing(to);
      const late = fixed(to);
      if (late) return late;
      const present = structure.dependencies.get(to)!.includes(from);
      if (change.op === 'remove-edge') return present ? undefined : `"${to}" does not depend on "${from}"`;
      if (from === to) return `"${to}" cannot depend on itself`;
      if (present) return `"${to}" already depends on "${from}"`;
      const cycle = findCycle(applyChange(structure, change));
      return cycle && `it would close a cycle: ${describeCycle(cycle)}`;
    }
    case 'skip': {
      if (!has(change.node)) return missing(change.node);
      const late = fixed(change.node);
      if (late) return late;
      if (structure.skips.has(change.node)) return `"${change.node}" is already skipped`;
      return limits.reusable(change.node)
        ? undefined
        : `"${change.node}" has no output from an earlier pass to reuse`;
    }
  }
}

/** `structure` with `change` made; the input is not modified. */
export function applyChange(structure: PassStructure, change: FlowChange): PassStructure {
  const dependencies = new Map(structure.dependencies);
  switch (change.op) {
    case 'add-node':
      dependencies.set(change.node.name, [...change.node.dependencies]);
      return {
        ...structure,
        nodes: new Map(structure.nodes).set(change.node.name, change.node),
        order: [...structure.order, change.node.name],
        dependencies,
        after: new Map(structure.after).set(change.node.name, [...change.node.after]),
      };
    case 'add-edge':
      dependencies.set(change.to, [...(dependencies.get(change.to) ?? []), change.from]);
      return { ...structure, dependencies };
    case 'remove-edge':
      dependencies.set(
        change.to,
        (dependencies.get(change.to) ?? []).filter((dep) => dep !== change.from),
      );
      return { ...structure, dependencies };
    case 'skip':
      return { ...structure, skips: new Set(structure.skips).add(change.node) };
  }
}

/** The node whose inputs `change` changes, if any: an edge's target, a skipped node. */
export function changedNode(change: FlowChange): string | undefined {
  return change.op === 'add-node' ? undefined : change.op === 'skip' ? change.node : change.to;
}

/** A change in a few words, for events and the report. */
export function describeChange(change: FlowChange): string {
  switch (change.op) {
    case 'add-node':
      return `add node ${change.node.name}`;
    case 'add-edge':
      return `add edge ${change.from} → ${change.to}`;
    case 'remove-edge':
      return `remove edge ${change.from} → ${change.to}`;
    case 'skip':
      return `skip ${change.node}`;
  }
}
