/** Every export format behind one call, and the format a file name implies. */
import { graphToCsv } from '../graph/csv.js';
import type { GraphFile } from '../graph/schema.js';
import { toDot } from './dot.js';
import { toHtml } from './html.js';
import { toJson } from './json.js';
import { toMermaid } from './mermaid.js';
import { toSvg } from './svg.js';

/** The formats `exportGraph` writes. */
export const EXPORT_FORMATS = ['dot', 'svg', 'json', 'csv', 'mermaid', 'html'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** An exported graph, and what the format could not hold (CSV keeps nodes only). */
export interface ExportResult {
  text: string;
  warnings: string[];
}

const EXTENSIONS: Record<string, ExportFormat> = {
  '.dot': 'dot',
  '.gv': 'dot',
  '.svg': 'svg',
  '.json': 'json',
  '.csv': 'csv',
  '.mmd': 'mermaid',
  '.mermaid': 'mermaid',
  '.html': 'html',
  '.htm': 'html',
};

/** True when `name` is one of the export formats. */
export function isExportFormat(name: string): name is ExportFormat {
  return (EXPORT_FORMATS as readonly string[]).includes(name);
}

/** The format a file name's extension implies (`.gv` is DOT, `.mmd` Mermaid, …); undefined when none. */
export function formatFromPath(path: string): ExportFormat | undefined {
  const match = /\.[^./\\]+$/.exec(path.toLowerCase());
  return match ? EXTENSIONS[match[0]] : undefined;
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
      return graphToCsv(file);
    case 'mermaid':
      return { text: toMermaid(file), warnings: [] };
    case 'html':
      return { text: await toHtml(file), warnings: [] };
  }
}
