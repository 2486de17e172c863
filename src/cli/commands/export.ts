/** `meta-agent export FILE`: a graph or flow as DOT, SVG, JSON, CSV, Mermaid or an interactive HTML page. */
import type { Command } from 'commander';
import { EXPORT_FORMATS, FLOW_EXPORT_FORMATS } from '../../export/format-names.js';
import type { ExportOptions } from '../actions/export.js';

const EXAMPLES = `
Examples:
  $ meta-agent export tutor.autogram.json                      DOT on stdout
  $ meta-agent export tutor.autogram.json -o tutor.html        interactive page (format from the extension)
  $ meta-agent export fraction_agent.csv --format svg -o f.svg AutoGRAMS spreadsheet in, SVG out
  $ meta-agent export tutor.autogram.json -f mermaid           Mermaid flowchart for a README
  $ meta-agent export tutor.autogram.json -f csv -o tutor.csv  AutoGRAMS spreadsheet out
  $ meta-agent export tutor.autogram.json -f svg -o - | less   "-o -" is stdout
  $ meta-agent export research.flow.json -o research.html      a flow: its nodes and dependencies

Formats: ${EXPORT_FORMATS.join(', ')}. A flow (NAME.flow.json): ${FLOW_EXPORT_FORMATS.join(', ')}.
Without --format, the extension of -o decides (.dot .gv .svg .json .csv .mmd .mermaid .html .htm); with
neither, DOT. An existing file keeps its permissions; a FIFO or a device (-o /dev/stdout) is written
through, never replaced.

CSV is AutoGRAMS' spreadsheet, whose code is Python: a Python graph's code nodes are written as
python_function. A JavaScript graph's code, conditions and call arguments are written as they are (code
nodes as action code, which AutoGRAMS refuses rather than run as Python), with a warning naming those
nodes: meta-agent reads a spreadsheet back as Python, so port them, or keep the graph in .autogram.json.`;

/** Registers `export`. */
export function register(program: Command): void {
  program
    .command('export')
    .description('write a graph or flow as DOT, SVG, JSON, CSV, Mermaid or an interactive HTML page')
    .argument('<graph>', 'graph file (NAME.autogram.json, AutoGRAMS .csv) or flow file (NAME.flow.json)')
    .option('-f, --format <format>', `output format: ${EXPORT_FORMATS.join('|')}`)
    .option('-o, --output <file>', 'write to FILE instead of stdout ("-" is stdout)')
    .addHelpText('after', EXAMPLES)
    .action(async (path: string, options: ExportOptions) => {
      const { runExport } = await import('../actions/export.js');
      await runExport(path, options);
    });
}
