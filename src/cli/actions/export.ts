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

/** Writes the graph file at `graph` in the chosen format, to the output file or stdout. */
export async function runExport(graph: string, options: ExportOptions): Promise<void> {
  const format = chooseFormat(options);
  const { file, warnings } = await loadGraphFile(graph);
  const result = await exportGraph(file, format);
  for (const warning of [...warnings, ...result.warnings]) process.stderr.write(`warning: ${warning}\n`);
  if (options.output) {
    await writeFileAtomic(options.output, result.text);
    process.stderr.write(`wrote ${options.output} (${format}, ${file.nodes.length} nodes)\n`);
  } else process.stdout.write(result.text);
}

function chooseFormat(options: ExportOptions): ExportFormat {
  const hint = `use one of: ${EXPORT_FORMATS.join(', ')}`;
  if (options.format !== undefined) {
    const name = options.format.toLowerCase();
    if (!isExportFormat(name)) throw new UserError(`unknown format "${options.format}"`, 2, hint);
    return name;
  }
  if (!options.output) return 'dot';
  const inferred = formatFromPath(options.output);
  if (!inferred)
    throw new UserError(`cannot tell the format from "${options.output}"`, 2, `pass --format; ${hint}`);
  return inferred;
}
