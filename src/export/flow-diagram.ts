/**
 * The drawing of a flow (`NAME.flow.json`): a box per node, with its name, what checks its answer and an
 * excerpt of its prompt (a tool node: `MCP tool SERVER/TOOL` and its arguments), an arrow from each
 * dependency to the node that uses its answer, and a dashed one from each node another runs `after`. A
 * dependency on a name no node has is drawn as a dashed box, as a graph's transition to one is; a flow
 * with lint errors is drawn as it is.
 */
import { describeCompose } from '../flow/compose.js';
import type { FlowFile, FlowNode } from '../flow/schema.js';
import type { Diagram, DiagramEdge, DiagramNode, LabelPart } from './diagram.js';

/** Builds the drawing of a flow file: its nodes in file order, missing dependencies after them. */
export function buildFlowDiagram(flow: FlowFile): Diagram {
  const names = new Set(flow.nodes.map((node) => node.name));
  const nodes: DiagramNode[] = flow.nodes.map((node, i) => ({
    key: node.name,
    id: `ag-node-${i}`,
    kind: 'node',
    text: node.name,
    label: flowNodeLabel(node),
    // A node whose answer an after-query step checks stands apart, as code does in a graph; a tool
    // call is drawn as a graph's function call.
    family: node.tool ? 'function' : node.afterQuery ? 'code' : 'thought',
    start: false,
  }));
  const missing = new Set<string>();
  const edges: DiagramEdge[] = [];
  const ordered = (node: FlowNode) => [
    ...node.dependencies.map((from) => ({ from, kind: 'dependency' as const })),
    ...node.after.map((from) => ({ from, kind: 'order' as const })),
  ];
  for (const node of flow.nodes)
    for (const { from: dependency, kind } of ordered(node)) {
      if (!names.has(dependency) && !missing.has(dependency)) {
        nodes.push({
          key: dependency,
          id: `ag-mark-${missing.size}`,
          kind: 'missing',
          text: dependency,
          start: false,
        });
        missing.add(dependency);
      }
      edges.push({ from: dependency, to: node.name, kind, label: [] });
    }
  return { name: flow.name, nodes, edges, categories: [] };
}

/**
 * `MCP tool SERVER/TOOL` for a tool node; else `model: NAME · after-query: schema + code · fallback`, or
 * undefined for none of them.
 */
export function flowNodeSteps(node: FlowNode): string | undefined {
  if (node.tool) return `MCP tool ${node.tool.server}/${node.tool.name}`;
  const checks = [node.afterQuery?.schema && 'schema', node.afterQuery?.code !== undefined && 'code'];
  const steps = [
    node.model !== undefined && `model: ${node.model}`,
    node.afterQuery && `after-query: ${checks.filter(Boolean).join(' + ')}`,
    node.fallback !== undefined && 'fallback',
  ].filter(Boolean);
  return steps.length > 0 ? steps.join(' · ') : undefined;
}

function flowNodeLabel(node: FlowNode): LabelPart[] {
  const parts: LabelPart[] = [{ look: 'title', text: node.name, lines: 2 }];
  const steps = flowNodeSteps(node);
  if (steps) parts.push({ look: 'tag', text: steps, lines: 2 });
  // A node may ask everything through its compose template and leave its prompt empty; a tool node's
  // text is its arguments.
  const text = node.tool
    ? JSON.stringify(node.tool.arguments)
    : node.prompt?.trim()
      ? node.prompt
      : (describeCompose(node) ?? '');
  if (text.trim()) parts.push({ look: 'text', text, lines: 4 });
  return parts;
}
