/** Every export format behind one call (format-names.ts names them). */
import type { GraphFile } from '../graph/schema.js';
import { toDot } from './dot.js';
import type { ExportFormat } from './format-names.js';
import { toHtml } from './html.js';
import { toJson } from './json.js';
import { toMermaid } from './mermaid.js';
import { toSvg } from './svg.js';

/** An exported graph, and what the format could not hold (CSV keeps nodes only). */
export interface ExportResult {
  text: string;
  warnings: string[];
}

/** Writes a graph file in one of the export formats. */
export async function exportGraph(file: GraphFile, format: ExportFormat): Promise<ExportResult> {
  switch (format) {
    case 'dot':
      return { text: toDot(file), warnings: [] };
    case 'svg':
      return { text: await toSvg(file), warnings: [] };
    case 'json':
      return { text: toJson(file), warnings: [] };
    case 'csv':
      // The CSV writer loads only for this format, like Graphviz (graphviz.ts) for SVG and HTML.
      return (await import('../graph/csv.js')).graphToCsv(file);
    case 'mermaid':
      return { text: toMermaid(file), warnings: [] };
    case 'html':
      return { text: await toHtml(file), warnings: [] };
  }
}
