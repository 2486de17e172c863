/** What `meta-agent validate` does (declared in ../commands/validate.ts). */
import { InvalidFileError, isUserError, type UserError } from '../../errors.js';
import { lintFlow } from '../../flow/lint.js';
import { isFlowPath, loadFlowFile } from '../../flow/load.js';
import type { Finding } from '../../graph/lint.js';
import { countFindings, formatFinding, openGraph } from '../load-graph.js';
import { writeOut } from '../terminal.js';

/** `validate`'s options as commander parses them. */
export interface ValidateOptions {
  json?: boolean;
}

/** The result for one file, as `--json` prints it. */
interface FileReport {
  file: string;
  nodes?: number;
  findings: Finding[];
  warnings: string[];
  /** Why the file could not be loaded as a graph or flow at all (then there are no findings). */
  failed?: { message: string; hint?: string; exitCode: UserError['exitCode'] };
}

/**
 * Lints every file in `paths` (graphs, and flows: `.flow.json` files) and prints the findings; the exit
 * code is 1 when a file is not a valid graph or flow or has errors, 2 when a file cannot be read at all.
 */
export async function runValidate(paths: string[], options: ValidateOptions): Promise<void> {
  const reports: FileReport[] = [];
  let exitCode = 0;
  for (const path of paths) {
    const report = await check(path);
    reports.push(report);
    const code = report.failed?.exitCode ?? (report.findings.some(isError) ? 1 : 0);
    exitCode = Math.max(exitCode, code);
    if (!options.json) printReport(report);
  }
  if (options.json) writeOut(`${JSON.stringify(reports.length === 1 ? reports[0] : reports, null, 2)}\n`);
  process.exitCode = exitCode;
}

async function check(path: string): Promise<FileReport> {
  const warnings: string[] = [];
  try {
    if (isFlowPath(path)) {
      const flow = await loadFlowFile(path);
      return { file: path, nodes: flow.nodes.length, findings: lintFlow(flow), warnings };
    }
    const { file, findings } = await openGraph(path, { allowErrors: true, warn: (w) => warnings.push(w) });
    return { file: path, nodes: file.nodes.length, findings, warnings };
  } catch (error) {
    if (!isUserError(error)) throw error;
    return {
      file: path,
      findings: [],
      warnings,
      failed: {
        message: error.message,
        ...(error.hint !== undefined && { hint: error.hint }),
        exitCode: error instanceof InvalidFileError ? 1 : error.exitCode,
      },
    };
  }
}

function printReport(report: FileReport): void {
  const out = (line: string): boolean => writeOut(`${line}\n`);
  if (report.failed) {
    out(`error    ${report.failed.message}`);
    if (report.failed.hint) out(`         hint: ${report.failed.hint}`);
    return;
  }
  for (const warning of report.warnings) out(`warning  ${warning}`);
  const whole = isFlowPath(report.file) ? '(flow)' : '(graph)';
  for (const finding of report.findings) {
    out(`${finding.severity.padEnd(9)}${formatFinding(finding, whole)}`);
    if (finding.hint) out(`         hint: ${finding.hint.replaceAll('\n', `\n${' '.repeat(15)}`)}`);
  }
  const nodes = report.nodes === undefined ? '' : `${report.nodes} nodes, `;
  out(`${report.file}: ${nodes}${countFindings(report.findings, report.warnings.length)}`);
}

function isError(finding: Finding): boolean {
  return finding.severity === 'error';
}
