/**
 * How commands open a graph file: load it, pass on what the loader could not keep, lint it, and refuse
 * to run a graph that has errors (pointing at `meta-agent validate` for the full list).
 */
import { InvalidFileError } from '../errors.js';
import { lintGraph } from '../aipl/lint.js';
import type { Finding } from '../graph/lint.js';
import { loadGraphFile } from '../graph/load.js';
import type { GraphFile } from '../graph/schema.js';
import { plural } from './words.js';
import { writeErr } from './terminal.js';

/** A graph file as a command receives it. */
export interface OpenedGraph {
  file: GraphFile;
  findings: Finding[];
  /** What the loader could not carry over (ignored CSV columns, unknown fields). */
  warnings: string[];
}

export interface OpenGraphOptions {
  /** Return a graph with lint errors instead of refusing it (validate, show). */
  allowErrors?: boolean;
  /** Where loader warnings go; by default, `warning: …` lines on stderr. */
  warn?: (warning: string) => void;
}

/** Loads and lints a graph file; throws an InvalidFileError for lint errors unless `allowErrors`. */
export async function openGraph(path: string, options: OpenGraphOptions = {}): Promise<OpenedGraph> {
  const { file, warnings } = await loadGraphFile(path);
  const warn = options.warn ?? ((warning: string) => writeErr(`warning: ${warning}\n`));
  for (const warning of warnings) warn(warning);
  const findings = lintGraph(file);
  const errors = findings.filter((f) => f.severity === 'error');
  if (errors.length > 0 && !options.allowErrors)
    throw new InvalidFileError(
      `${path}: the graph has ${plural(errors.length, 'error')}, the first: ${formatFinding(errors[0]!)}`,
      `run "meta-agent validate ${path}" to see them all`,
    );
  return { file, findings, warnings };
}

/** `node: message`, or `(graph): message` (`whole`) for a finding about the whole file. */
export function formatFinding(finding: Finding, whole = '(graph)'): string {
  return `${finding.node ?? whole}: ${finding.message}`;
}

/** `2 errors, 1 warning`. */
export function countFindings(findings: readonly Finding[], extraWarnings = 0): string {
  const errors = findings.filter((f) => f.severity === 'error').length;
  const warnings = findings.length - errors + extraWarnings;
  return `${plural(errors, 'error')}, ${plural(warnings, 'warning')}`;
}
