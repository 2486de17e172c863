/** What `meta-agent show` does (declared in ../commands/show.ts). */
import { baseStructure } from '../../flow/changes.js';
import { describeCompose } from '../../flow/compose.js';
import { depthOf } from '../../flow/dag.js';
import { lintFlow } from '../../flow/lint.js';
import { isFlowPath, loadFlowFile } from '../../flow/load.js';
import type { FlowFile, FlowNode } from '../../flow/schema.js';
import type { CompiledNode, TransitionTarget } from '../../graph/parse.js';
import type { GraphFile } from '../../graph/schema.js';
import { startNodeOf, visitMembers, wildcardMembers } from '../../graph/structure.js';
import { compileGraph } from '../../graph/view.js';
import { countFindings, openGraph } from '../load-graph.js';
import { writeOut } from '../terminal.js';

const EXCERPT = 76;

/** Prints the summary of the graph or flow file at `path`, even one with lint errors. */
export async function runShow(path: string): Promise<void> {
  if (isFlowPath(path)) {
    const flow = await loadFlowFile(path);
    writeOut(describeFlow(flow, path, countFindings(lintFlow(flow))));
    return;
  }
  const { file, findings, warnings } = await openGraph(path, { allowErrors: true });
  writeOut(describeGraph(file, path, countFindings(findings, warnings.length)));
}

/** The whole summary as text. */
function describeGraph(file: GraphFile, path: string, findings: string): string {
  const { nodes } = compileGraph(file);
  const names = new Set(nodes.map((n) => n.name));
  const has = (name: string): boolean => names.has(name);
  const start = startNodeOf(file);
  const lines = [`${file.name} (${path})`];
  if (file.description) lines.push(`  ${excerpt(file.description)}`);
  lines.push(`${nodes.length} nodes, start: ${start ?? '(none)'}; ${findings}`, '');
  for (const node of nodes) lines.push(...describeNode(node, node.name === start, has));
  return `${lines.join('\n')}\n`;
}

function describeNode(node: CompiledNode, isStart: boolean, has: (name: string) => boolean): string[] {
  const marks = [
    isStart ? '[start]' : '',
    node.callable ? '[function]' : '',
    node.isInterjection ? `[interjection: ${excerpt(node.conditionInterjection ?? '')}]` : '',
  ].filter(Boolean);
  const lines = [[node.name, node.action, ...marks].join('  ')];
  if (node.instruction.trim()) lines.push(`    ${excerpt(node.instruction)}`);
  if (node.booleanCondition) lines.push(`    if ${excerpt(node.booleanCondition)}`);
  if (node.call) lines.push(`    calls ${node.call.fn}(${node.call.args.join(', ')}), then continues below`);
  if (node.transitions.length > 1 && node.transitionQuestion)
    lines.push(`    ? ${excerpt(node.transitionQuestion)}`);
  node.targets.forEach((target, i) => {
    const choice = node.transitions.length > 1 ? node.transitionChoices[i] : undefined;
    lines.push(`    → ${describeTarget(node.transitions[i]!, target, has)}${choice ? `  [${choice}]` : ''}`);
  });
  return lines;
}

function describeTarget(text: string, target: TransitionTarget, has: (name: string) => boolean): string {
  const group =
    target.kind === 'wildcard'
      ? wildcardMembers(target.prefix, has)
      : target.kind === 'visit'
        ? visitMembers(target.base, has)
        : undefined;
  if (group) return `${text} (${group.length > 0 ? group.join(', ') : 'no members'})`;
  if (target.kind === 'node' && !has(target.name)) return `${text} (missing)`;
  return text;
}

/** A flow's summary: its size and inputs, then each node with what it waits for and what checks its answer. */
function describeFlow(flow: FlowFile, path: string, findings: string): string {
  const names = new Set(flow.nodes.map((node) => node.name));
  const inputs = Object.keys(flow.inputs).join(', ') || 'none';
  const depth = depthOf(baseStructure(flow));
  const lines = [`${flow.name} (${path})`];
  if (flow.description) lines.push(`  ${excerpt(flow.description)}`);
  lines.push(
    `${flow.nodes.length} nodes, depth ${depth} (longest dependency chain), inputs: ${inputs}; ${findings}`,
    '',
  );
  for (const node of flow.nodes) lines.push(...describeFlowNode(node, (name) => names.has(name)));
  return `${lines.join('\n')}\n`;
}

function describeFlowNode(node: FlowNode, has: (name: string) => boolean): string[] {
  const needs = node.dependencies.map((dep) => (has(dep) ? dep : `${dep} (missing)`));
  const steps = [
    node.afterQuery?.schema && '[schema]',
    node.afterQuery?.code !== undefined && '[code]',
    node.fallback !== undefined && '[fallback]',
  ].filter(Boolean);
  // Shown by the file's own field names: the dependencies it reads, the `after` nodes it only waits for.
  const waits = node.after.map((dep) => (has(dep) ? dep : `${dep} (missing)`));
  const head = [
    node.name,
    needs.length > 0 && `[dependencies: ${needs.join(', ')}]`,
    waits.length > 0 && `[after: ${waits.join(', ')}]`,
    node.model !== undefined && `[model: ${node.model}]`,
    steps.join(' '),
  ];
  const lines = [head.filter(Boolean).join('  ')];
  if (node.prompt?.trim()) lines.push(`    ${excerpt(node.prompt)}`);
  if (node.tool)
    lines.push(
      `    MCP tool ${node.tool.server}/${node.tool.name} ${excerpt(JSON.stringify(node.tool.arguments))}`,
    );
  if (node.system?.trim()) lines.push(`    system: ${excerpt(node.system)}`);
  const compose = describeCompose(node);
  if (compose?.trim()) lines.push(`    compose: ${excerpt(compose)}`);
  return lines;
}

function excerpt(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > EXCERPT ? `${line.slice(0, EXCERPT - 1)}…` : line;
}
