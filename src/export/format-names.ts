/**
 * The export formats by name, and the format a file name implies. Apart from formats.ts, which writes
 * them, so that declaring the `export` command's options loads no exporter.
 */

/** The formats `exportGraph` writes. */
export const EXPORT_FORMATS = ['dot', 'svg', 'json', 'csv', 'mermaid', 'html'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** The formats a flow file exports to: all but CSV, which holds AutoGRAMS graphs. */
export const FLOW_EXPORT_FORMATS: readonly ExportFormat[] = ['dot', 'svg', 'json', 'mermaid', 'html'];

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
