/** What `meta-agent export` does (declared in ../commands/export.ts). */
import { UserError } from '../../errors.js';
import {
  EXPORT_FORMATS,
  formatFromPath,
  isExportFormat,
  type ExportFormat,
} from '../../export/format-names.js';
import { exportGraph } from '../../export/formats.js';
import { loadGraphFile, writeFileAtomic } from '../../graph/load.js';
import type { ExportOptions } from '../commands/export.js';
import { writeOut, writeErr } from '../terminal.js';

/**
 * Writes the graph file at `graph` in the chosen format, to the output file or stdout (no `-o`, or
 * `-o -`). A FIFO or a device given to `-o` is written through, not replaced.
 */
export async function runExport(graph: string, options: ExportOptions): Promise<void> {
  const output = options.output === '-' ? undefined : options.output;
  const format = chooseFormat(options.format, output);
  const { file, warnings } = await loadGraphFile(graph);
  const result = await exportGraph(file, format);
  for (const warning of [...warnings, ...result.warnings]) writeErr(`warning: ${warning}\n`);
  if (output) {
    await writeFileAtomic(output, result.text);
    writeErr(`wrote ${output} (${format}, ${file.nodes.length} nodes)\n`);
  } else writeOut(result.text);
}

function chooseFormat(format: string | undefined, output: string | undefined): ExportFormat {
  const hint = `use one of: ${EXPORT_FORMATS.join(', ')}`;
  if (format !== undefined) {
    const name = format.toLowerCase();
    if (!isExportFormat(name)) throw new UserError(`unknown format "${format}"`, 2, hint);
    return name;
  }
  if (!output) return 'dot';
  const inferred = formatFromPath(output);
  if (!inferred) throw new UserError(`cannot tell the format from "${output}"`, 2, `pass --format; ${hint}`);
  return inferred;
}
