/** `meta-agent export GRAPH`: a graph file as DOT, SVG, JSON, CSV, Mermaid or an interactive HTML page. */
import type { Command } from 'commander';
import { UserError } from '../../errors.js';
import {
  EXPORT_FORMATS,
  exportGraph,
  formatFromPath,
  isExportFormat,
  type ExportFormat,
} from '../../export/formats.js';
import { loadGraphFile, writeFileAtomic } from '../../graph/load.js';

const EXAMPLES = `
Examples:
  $ meta-agent export tutor.autogram.json                      DOT on stdout
  $ meta-agent export tutor.autogram.json -o tutor.html        interactive page (format from the extension)
  $ meta-agent export fraction_agent.csv --format svg -o f.svg AutoGRAMS spreadsheet in, SVG out
  $ meta-agent export tutor.autogram.json -f mermaid           Mermaid flowchart for a README
  $ meta-agent export tutor.autogram.json -f csv -o tutor.csv  AutoGRAMS spreadsheet out

Formats: ${EXPORT_FORMATS.join(', ')}. Without --format, the extension of -o decides
(.dot .gv .svg .json .csv .mmd .mermaid .html .htm); with neither, DOT.`;

interface ExportOptions {
  format?: string;
  output?: string;
}

/** Registers `export`. */
export function register(program: Command): void {
  program
    .command('export')
    .description('write a graph as DOT, SVG, JSON, CSV, Mermaid or an interactive HTML page')
    .argument('<graph>', 'graph file: NAME.autogram.json or an AutoGRAMS .csv spreadsheet')
    .option('-f, --format <format>', `output format: ${EXPORT_FORMATS.join('|')}`)
    .option('-o, --output <file>', 'write to FILE instead of stdout')
    .addHelpText('after', EXAMPLES)
    .action(async (graph: string, options: ExportOptions) => {
      const format = chooseFormat(options);
      const { file, warnings } = await loadGraphFile(graph);
      const result = await exportGraph(file, format);
      for (const warning of [...warnings, ...result.warnings]) process.stderr.write(`warning: ${warning}\n`);
      if (options.output) {
        await writeFileAtomic(options.output, result.text);
        process.stderr.write(`wrote ${options.output} (${format}, ${file.nodes.length} nodes)\n`);
      } else process.stdout.write(result.text);
    });
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
