/** What `meta-agent export` does (declared in ../commands/export.ts). */
import { UserError } from '../../errors.js';
import { exportFlow } from '../../export/flow-formats.js';
import {
  EXPORT_FORMATS,
  FLOW_EXPORT_FORMATS,
  formatFromPath,
  isExportFormat,
  type ExportFormat,
} from '../../export/format-names.js';
import { exportGraph, type ExportResult } from '../../export/formats.js';
import { isFlowPath, loadFlowFile } from '../../flow/load.js';
import { loadGraphFile, writeFileAtomic } from '../../graph/load.js';
import { writeOut, writeErr } from '../terminal.js';

/** `export`'s options as commander parses them. */
export interface ExportOptions {
  format?: string;
  output?: string;
}

/**
 * Writes the graph or flow file at `path` (a flow is a `.flow.json` file) in the chosen format, to the
 * output file or stdout (no `-o`, or `-o -`). A FIFO or a device given to `-o` is written through, not
 * replaced.
 */
export async function runExport(path: string, options: ExportOptions): Promise<void> {
  const output = options.output === '-' ? undefined : options.output;
  const flow = isFlowPath(path);
  const format = chooseFormat(options.format, output, flow);
  const { result, nodes } = flow ? await exportFlowFile(path, format) : await exportGraphFile(path, format);
  for (const warning of result.warnings) writeErr(`warning: ${warning}\n`);
  if (output) {
    await writeFileAtomic(output, result.text);
    writeErr(`wrote ${output} (${format}, ${nodes} nodes)\n`);
  } else writeOut(result.text);
}

/** An export, with the loader's warnings among its own, and the node count for the `wrote …` line. */
interface Exported {
  result: ExportResult;
  nodes: number;
}

async function exportGraphFile(path: string, format: ExportFormat): Promise<Exported> {
  const { file, warnings } = await loadGraphFile(path);
  const result = await exportGraph(file, format);
  return { result: { ...result, warnings: [...warnings, ...result.warnings] }, nodes: file.nodes.length };
}

async function exportFlowFile(path: string, format: ExportFormat): Promise<Exported> {
  const flow = await loadFlowFile(path);
  return { result: await exportFlow(flow, format), nodes: flow.nodes.length };
}

/** The format asked for, or the one `-o`'s extension implies, or DOT. (exportFlow refuses CSV.) */
function chooseFormat(format: string | undefined, output: string | undefined, flow: boolean): ExportFormat {
  const hint = `use one of: ${(flow ? FLOW_EXPORT_FORMATS : EXPORT_FORMATS).join(', ')}`;
  const name = format !== undefined ? format.toLowerCase() : output ? formatFromPath(output) : 'dot';
  if (name === undefined)
    throw new UserError(`cannot tell the format from "${output}"`, 2, `pass --format; ${hint}`);
  if (!isExportFormat(name)) throw new UserError(`unknown format "${format}"`, 2, hint);
  return name;
}
