/**
 * The decisions of a flow pass, pure, on top of dag.ts and changes.ts: the values a new pass starts
 * with, the structure a resumed pass had reached, what the pass does next (reuse the skipped nodes,
 * block the ones a failure cuts off, run the ready ones, or finish), what a node is asked, how its
 * evaluation ends and what the user is told of it, and what a step commits. No model, no events, no
 * clock: runner.ts performs what these decide.
 */
import { InvalidFileError, UserError } from '../errors.js';
import type { FlowEvent } from '../events.js';
import { closestName } from '../graph/names.js';
import type { ChatMessage } from '../llm/types.js';
import { composeMessages, composeTemplates } from './compose.js';
import {
  applyChange,
  baseStructure,
  changedNode,
  describeChange,
  refusal,
  type ChangeLimits,
  type FlowChange,
  type PassStructure,
} from './changes.js';
import { nextStep, type Settlement } from './dag.js';
import {
  flowHash,
  type FlowRunState,
  type LastOutput,
  type NodeResult,
  type PassState,
} from './run-state.js';
import type { FlowFile, FlowNode, Json, ToolCall } from './schema.js';
import { renderFlowText, unsetReferences } from './template.js';
import { describeToolCall, renderArguments } from './tool-arguments.js';

/**
 * The database values a new pass starts with: every input given or defaulted. An input the flow does
 * not declare, or a required one left out, is a UserError naming it.
 */
export function passInputs(flow: FlowFile, given: Record<string, string>): Record<string, string> {
  const declared = Object.keys(flow.inputs);
  for (const name of Object.keys(given))
    if (!Object.hasOwn(flow.inputs, name))
      throw new UserError(
        `--input ${name}: the flow "${flow.name}" takes no input "${name}"`,
        2,
        declared.length > 0 ? `its inputs: ${declared.join(', ')}` : 'it takes no inputs',
      );
  const values: Record<string, string> = {};
  for (const [name, spec] of Object.entries(flow.inputs)) {
    const value = Object.hasOwn(given, name) ? given[name] : spec.default;
    if (value === undefined)
      throw new UserError(
        `the flow "${flow.name}" needs --input ${name}=…`,
        2,
        spec.description ?? `every input without a default must be given`,
      );
    values[name] = value;
  }
  return values;
}

/** What a change may touch in a pass of the run `state`: a skip reuses an earlier pass's output. */
export function changeLimits(state: FlowRunState, fixed: (node: string) => string | undefined): ChangeLimits {
  return { fixed, reusable: (node) => Object.hasOwn(state.last, node) };
}

/**
 * What a change `asker` asks for in step `step` (whose nodes are `ready`, in the flow's order) may
 * touch. Not a node settled earlier in the pass, nor the asker itself, nor a node of the step before
 * it in that order: the step commits that one's answer first. A node of the step after it is open:
 * its answer in this step is set aside (setAside) and it runs again once its new inputs are there.
 */
export function stepLimits(
  state: FlowRunState,
  pass: PassState,
  step: number,
  ready: readonly string[],
  asker: string,
): ChangeLimits {
  const at = ready.indexOf(asker);
  return changeLimits(state, (node) => {
    const settled = pass.results[node];
    if (settled) return settledWhen(node, settled);
    if (node === asker) return `"${node}" is running now`;
    const index = ready.indexOf(node);
    return index !== -1 && index < at
      ? `"${node}" runs in step ${step} too, before "${asker}" in the flow's order`
      : undefined;
  });
}

function settledWhen(node: string, result: NodeResult): string {
  const when = result.step === undefined ? 'in this pass' : `in step ${result.step} of this pass`;
  switch (result.status) {
    case 'done':
    case 'failed':
      return `"${node}" already ran ${when}`;
    case 'reused':
      return `"${node}" already reused its last output in this pass`;
    case 'blocked':
      return `"${node}" was already skipped after a failure in this pass`;
  }
}

/**
 * The nodes of a step (`ready`, in the flow's order) whose answers in it are set aside: a node before
 * them in the step asked to change their inputs (an edge into them, a skip), so they wait and run
 * again in a later step, as if they had not been ready. A node set aside asks for nothing itself.
 * `changesOf` gives what a node's answer asked for, or undefined while it is still being asked; the
 * walk stops there, so every node returned is set aside for certain, whatever the rest answer. The
 * same nodes are set aside whether the step ran its nodes at once or one by one; one by one, a node
 * found here before it is asked is not asked at all.
 */
export function setAside(
  ready: readonly string[],
  changesOf: (node: string) => readonly FlowChange[] | undefined,
): Set<string> {
  const aside = new Set<string>();
  for (const [index, node] of ready.entries()) {
    if (aside.has(node)) continue;
    const changes = changesOf(node);
    if (changes === undefined) break;
    for (const change of changes) {
      const target = changedNode(change);
      if (target !== undefined && ready.indexOf(target) > index) aside.add(target);
    }
  }
  return aside;
}

/**
 * The structure the pass in progress had reached: the file's, with the pass's saved changes made
 * again. A UserError when the flow file changed since the pass began, or `inputs` differ from the
 * pass's; an InvalidFileError when a saved change cannot be made (the run file may have been edited).
 */
export function resumedStructure(
  flow: FlowFile,
  state: FlowRunState,
  inputs: Record<string, string>,
): PassStructure {
  const pass = state.current!;
  if (state.flowHash !== flowHash(flow))
    throw new UserError(
      `pass ${pass.pass} of "${flow.name}" began on another version of the flow file`,
      2,
      'restore the flow as it was to finish that pass, or start a new run without its state file',
    );
  let structure = baseStructure(flow);
  const limits = changeLimits(state, () => undefined);
  for (const change of pass.changes) {
    const reason = refusal(structure, change, limits);
    if (reason !== undefined)
      throw new InvalidFileError(
        `the saved pass ${pass.pass} of "${flow.name}" holds a change that cannot be made: ${describeChange(change)}: ${reason}`,
        'start a new run without that state file',
      );
    structure = applyChange(structure, change);
  }
  const differs = Object.entries(inputs).some(([name, value]) => pass.inputs[name] !== value);
  if (differs)
    throw new UserError(
      `pass ${pass.pass} of "${flow.name}" is not finished, and began with other inputs`,
      2,
      'run it again without --input to finish it; the new inputs go to the next pass',
    );
  return structure;
}

/** A node settled without being asked. */
export interface Settled {
  node: string;
  result: NodeResult;
}

/** What the pass does next. */
export type PassMove =
  /** Nodes a committed change skipped: they settle as reused, before anything else is decided. */
  | { kind: 'reuse'; settled: Settled[] }
  /** Nodes that can never run in this pass: something they need failed. */
  | { kind: 'block'; settled: Settled[] }
  /** Nodes whose dependencies all have outputs: one step runs them together. */
  | { kind: 'run'; nodes: string[] }
  /** Nothing is left that can run. */
  | { kind: 'finish' };

/**
 * The pass's next move. What a blocked node blocks in turn is decided on the next move, once it is
 * settled.
 */
export function nextMove(structure: PassStructure, pass: PassState, last: FlowRunState['last']): PassMove {
  const skipped = [...structure.skips].filter((node) => !pass.results[node]);
  if (skipped.length > 0)
    return { kind: 'reuse', settled: skipped.map((node) => ({ node, result: reusedResult(last[node]!) })) };
  const next = nextStep(structure, settlements(pass), (node) => rootFailure(pass, node));
  if (next.blocked.length > 0)
    return {
      kind: 'block',
      settled: next.blocked.map(({ node, failed }) => ({ node, result: blockedResult(failed) })),
    };
  return next.ready.length > 0 ? { kind: 'run', nodes: next.ready } : { kind: 'finish' };
}

function settlements(pass: PassState): Map<string, Settlement> {
  return new Map(Object.entries(pass.results).map(([name, result]) => [name, result.status]));
}

function rootFailure(pass: PassState, node: string): string {
  const result = pass.results[node];
  return result?.status === 'blocked' && result.upstream ? result.upstream : node;
}

function reusedResult(last: LastOutput): NodeResult {
  return {
    status: 'reused',
    output: last.output,
    prompt: last.prompt,
    tokens: 0,
    attempts: 0,
    savedTokens: last.tokens,
  };
}

function blockedResult(failed: string): NodeResult {
  const detail = `skipped: upstream failed (${failed})`;
  return { status: 'blocked', tokens: 0, attempts: 0, upstream: failed, detail };
}

/** What a node is asked: its prompt, and the messages that carry it; or why it cannot be asked. */
export type NodeRequest =
  | {
      ok: true;
      prompt: string;
      messages: ChatMessage[];
      outputs: Map<string, unknown>;
      /** `$db…$` references the database has no value for: they read as UNSET_VALUE (template.ts). */
      unset: string[];
    }
  | { ok: false; result: NodeResult };

/** The request for the prompt node `name`, against the database as its step began. */
export function nodeRequest(
  flow: FlowFile,
  structure: PassStructure,
  pass: PassState,
  name: string,
  database: Record<string, Json>,
): NodeRequest {
  const node = structure.nodes.get(name)!;
  const dependencies = structure.dependencies.get(name) ?? [];
  const outputs = new Map(dependencies.map((dep) => [dep, pass.results[dep]!.output]));
  try {
    const prompt = renderFlowText(node.prompt ?? '', { db: database, outputs });
    const answered = (dep: string) => pass.results[dep]!;
    const messages = composeMessages({ flow, node, prompt, dependencies, answered, database, outputs });
    const templates = composeTemplates(node).map(([, text]) => text);
    const system = node.system === undefined ? [flow.config.system] : [];
    const unset = unsetReferences([...system, node.prompt, ...templates], database);
    return { ok: true, prompt, messages, outputs, unset };
  } catch (error) {
    return { ok: false, result: failedResult(0, 0, `its prompt: ${(error as Error).message}`) };
  }
}

/** The call a tool node makes, and how dependents see it asked; or why it cannot be made. */
export type ToolRequest =
  | { ok: true; call: ToolCall; arguments: Record<string, Json>; prompt: string }
  | { ok: false; result: NodeResult };

/** The call of the tool node `name` (tool-arguments.ts), against the database as its step began. */
export function toolRequest(
  structure: PassStructure,
  pass: PassState,
  name: string,
  database: Record<string, Json>,
): ToolRequest {
  const call = structure.nodes.get(name)!.tool!;
  const dependencies = structure.dependencies.get(name) ?? [];
  const outputs = new Map(dependencies.map((dep) => [dep, pass.results[dep]!.output]));
  try {
    const args = renderArguments(call, { db: database, outputs });
    return { ok: true, call, arguments: args, prompt: describeToolCall(call, args) };
  } catch (error) {
    return { ok: false, result: failedResult(0, 0, (error as Error).message) };
  }
}

/**
 * Refuses a flow whose tool nodes call servers the user has not configured (`servers`: the configured
 * names, undefined when there are none), with a UserError naming the first such node: the pass would
 * fail them, so it does not start, and no model is asked.
 */
export function checkToolServers(flow: FlowFile, servers: readonly string[] | undefined): void {
  const node = flow.nodes.find((node) => node.tool && !servers?.includes(node.tool.server));
  if (!node) return;
  const { server, name: tool } = node.tool!;
  if (servers === undefined)
    throw new UserError(
      `the flow "${flow.name}" calls MCP tools (node "${node.name}": ${server}/${tool}), but no MCP servers are configured`,
      2,
      `pass --mcp-config FILE naming a server "${server}" ({"mcpServers": {"${server}": {"command": …}}}), or add it to CONFIG_DIR/mcp.json`,
    );
  const guess = closestName(server, [...servers]);
  throw new UserError(
    `node "${node.name}" of the flow "${flow.name}" calls ${server}/${tool}, but your MCP configuration has no server "${server}"${guess ? `; did you mean "${guess}"?` : ''}`,
    2,
    `configured: ${servers.join(', ')}`,
  );
}

/** How a node that found no accepted answer ends. */
export interface Unanswered {
  node: FlowNode;
  prompt: string;
  tokens: number;
  /** Answers the flow allows a node (its config's `attempts`). */
  tries: number;
  /** Answers the after-query step rejected, and the reason for the last. */
  rejections: number;
  lastProblem: string;
  /** What ended the evaluation. */
  error: string;
}

/**
 * The node's fallback when every answer was rejected and it has one; otherwise it failed (a model that
 * cannot be reached, or code that cannot run, is not helped by a fallback).
 */
export function unansweredResult(ended: Unanswered): NodeResult {
  const { node, prompt, tokens, tries, rejections, lastProblem } = ended;
  if (rejections !== tries || node.fallback === undefined)
    return failedResult(tokens, rejections, ended.error);
  const detail = `fallback used: ${tries} answers were rejected, the last because ${lastProblem}`;
  return { status: 'done', output: node.fallback, prompt, tokens, attempts: tries, fellBack: true, detail };
}

/** A node that failed after `attempts` answers and `tokens`, and why. */
export function failedResult(tokens: number, attempts: number, detail: string): NodeResult {
  return { status: 'failed', tokens, attempts, detail };
}

/** What the user is told when a node settles as `result`. */
export function nodeEvent(node: string, result: NodeResult): FlowEvent {
  const { status, output, tokens, detail } = result;
  switch (status) {
    case 'reused':
      return { type: 'flow.node', node, status, output, tokens: result.savedTokens };
    case 'blocked':
      return { type: 'flow.node', node, status, detail };
    case 'failed':
      return { type: 'flow.node', node, status, detail, tokens, ...answeredBy(result) };
    case 'done':
      return result.fellBack
        ? { type: 'flow.node', node, status, output, tokens, detail, ...answeredBy(result) }
        : {
            type: 'flow.node',
            node,
            status,
            output,
            tokens,
            attempt: result.attempts,
            ...answeredBy(result),
          };
  }
}

function answeredBy(result: NodeResult): { model?: string } {
  return result.model === undefined ? {} : { model: result.model };
}

/** The top-level database keys that differ between a step's snapshot and what a node's code left. */
export function changedKeys(before: Record<string, Json>, after: Record<string, Json>): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]));
}

/**
 * One node's changes made together, or none of them: each was accepted when asked, but a node earlier
 * in the same step may have changed the flow since (two edges that together close a cycle).
 */
export function commitChanges(
  structure: PassStructure,
  changes: readonly FlowChange[],
  limits: ChangeLimits,
): { ok: true; structure: PassStructure } | { ok: false; reason: string } {
  let next = structure;
  for (const change of changes) {
    const reason = refusal(next, change, limits);
    if (reason !== undefined) return { ok: false, reason };
    next = applyChange(next, change);
  }
  return { ok: true, structure: next };
}
