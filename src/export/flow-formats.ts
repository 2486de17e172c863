/**
 * Every export format of a flow behind one call: the drawing (flow-diagram.ts) through the same DOT,
 * Mermaid, SVG and HTML writers as a graph's, and the validated flow as JSON. CSV is a graph format
 * (AutoGRAMS spreadsheets), so a flow refuses it.
 */
import { UserError } from '../errors.js';
import { sinksOf } from '../flow/dag.js';
import { baseStructure } from '../flow/changes.js';
import { describeCompose } from '../flow/compose.js';
import type { FlowFile, Json } from '../flow/schema.js';
import type { Diagram } from './diagram.js';
import { diagramToDot } from './dot.js';
import { buildFlowDiagram, flowNodeSteps } from './flow-diagram.js';
import { FLOW_EXPORT_FORMATS, type ExportFormat } from './format-names.js';
import type { ExportResult } from './formats.js';
import { drawPage, refsField, textField, type ViewerField, type ViewerNode } from './html.js';
import { toJson } from './json.js';
import { diagramToMermaid } from './mermaid.js';
import { renderDiagram } from './svg.js';

/** Writes a flow file in one of the export formats; CSV is a UserError (exit 2). */
export async function exportFlow(flow: FlowFile, format: ExportFormat): Promise<ExportResult> {
  switch (format) {
    case 'dot':
      return { text: diagramToDot(buildFlowDiagram(flow)), warnings: [] };
    case 'svg':
      return { text: await renderDiagram(buildFlowDiagram(flow)), warnings: [] };
    case 'json':
      return { text: toJson(flow), warnings: [] };
    case 'mermaid':
      return { text: diagramToMermaid(buildFlowDiagram(flow)), warnings: [] };
    case 'html':
      return { text: (await flowToSvgAndHtml(flow)).html, warnings: [] };
    case 'csv':
      throw new UserError(
        'a flow cannot be exported as CSV, which holds AutoGRAMS graphs',
        2,
        `use one of: ${FLOW_EXPORT_FORMATS.join(', ')}`,
      );
  }
}

/** The SVG drawing of a flow and the interactive page around it, laid out once. */
export function flowToSvgAndHtml(flow: FlowFile): Promise<{ svg: string; html: string }> {
  const { diagram, nodes } = flowDrawing(flow);
  return drawPage({ name: flow.name, description: flow.description, kind: 'flow' }, diagram, nodes);
}

/** A flow's drawing, not laid out yet, and what the panel shows of each of its nodes. */
export function flowDrawing(flow: FlowFile): { diagram: Diagram; nodes: ViewerNode[] } {
  const diagram = buildFlowDiagram(flow);
  // The boxes of the flow's nodes come first, in file order.
  const ids = diagram.nodes.map((box) => box.id);
  return { diagram, nodes: flowViewerNodes(flow, ids) };
}

/** Each node's panel: its prompt (or MCP tool and arguments), what it needs and what needs it, compose, after-query, fallback. */
function flowViewerNodes(flow: FlowFile, ids: string[]): ViewerNode[] {
  const names = new Set(flow.nodes.map((node) => node.name));
  const outputs = new Set(sinksOf(baseStructure(flow)));
  return flow.nodes.map((node, i) => {
    const badges: ViewerNode['badges'] = [];
    const steps = flowNodeSteps(node);
    if (steps) badges.push({ text: steps });
    if (outputs.has(node.name)) badges.push({ text: 'output', kind: 'start' });
    const dependents = flow.nodes.filter((other) => other.dependencies.includes(node.name));
    const needed = dependents.map((other) => ({ name: other.name }));
    const waiting = flow.nodes.filter((other) => other.after.includes(node.name));
    const fields = [
      textField('Prompt', node.prompt, true),
      textField('MCP tool', node.tool && `${node.tool.server}/${node.tool.name}`),
      textField('Arguments', json(node.tool?.arguments)),
      refsField(
        'Dependencies',
        node.dependencies.map((name) => (names.has(name) ? { name } : { name, label: 'no such node' })),
      ),
      refsField('Needed by', needed),
      refsField(
        'Runs after (order only)',
        node.after.map((name) => (names.has(name) ? { name } : { name, label: 'no such node' })),
      ),
      refsField(
        'Runs before (order only)',
        waiting.map((other) => ({ name: other.name })),
      ),
      textField('Model', node.model),
      textField('System', node.system, true),
      textField('Compose', describeCompose(node), true),
      textField('After-query schema', json(node.afterQuery?.schema)),
      textField('After-query code', node.afterQuery?.code, true),
      textField('Fallback', json(node.fallback)),
      textField('Notes', node.notes, true),
    ];
    return { id: ids[i]!, name: node.name, badges, fields: fields.filter((f): f is ViewerField => !!f) };
  });
}

function json(value: Json | Record<string, unknown> | undefined): string | undefined {
  return value === undefined ? undefined : JSON.stringify(value, null, 2);
}
