/**
 * Reading flow files (`NAME.flow.json`): JSON checked against the zod schema, with messages that name
 * the file, the line of a syntax error and the field at fault. A flow is told from a graph by its
 * extension.
 */
import { InvalidFileError } from '../errors.js';
import { checkJsonDepth } from '../graph/json-depth.js';
import { parseJsonText, readTextFile } from '../graph/load.js';
import { summarizeIssues } from '../graph/schema-issues.js';
import { lintFlow, type Finding } from './lint.js';
import { flowFileSchema, type FlowFile } from './schema.js';

/** True for a path that names a flow file. */
export function isFlowPath(path: string): boolean {
  return path.toLowerCase().endsWith('.flow.json');
}

/** The flow's name when the file does not give one: the file name without `.flow.json`. */
export function flowNameFromPath(path: string): string {
  return (path.split(/[\\/]/).pop() ?? path).replace(/\.flow\.json$/i, '');
}

/** Reads and validates a flow file. Missing or unreadable files, bad JSON and invalid flows are UserErrors. */
export async function loadFlowFile(path: string): Promise<FlowFile> {
  return parseFlowObject(parseJsonText(await readTextFile(path), path), path);
}

/**
 * Loads a flow to run it: lint errors refuse it, pointing at `meta-agent validate`; its warnings come
 * back. `shown` is the path as the user named it.
 */
export async function openFlow(path: string, shown = path): Promise<{ flow: FlowFile; warnings: Finding[] }> {
  const flow = await loadFlowFile(path);
  const findings = lintFlow(flow);
  const errors = findings.filter((finding) => finding.severity === 'error');
  if (errors.length > 0) {
    const first = errors[0]!;
    throw new InvalidFileError(
      `${shown}: the flow has ${errors.length} error${errors.length === 1 ? '' : 's'}, the first: ${first.node ?? '(flow)'}: ${first.message}`,
      `run "meta-agent validate ${shown}" to see them all`,
    );
  }
  return { flow, warnings: findings };
}

/**
 * Validates a parsed flow; `source` names it in messages. Its values (the database, fallbacks, answer
 * schemas) are plain JSON that validation walks recursively: one nested too deep is refused first.
 */
export function parseFlowObject(input: unknown, source: string): FlowFile {
  checkJsonDepth(input, source);
  const named =
    input !== null && typeof input === 'object' && !Array.isArray(input) && !('name' in input)
      ? { ...input, name: flowNameFromPath(source) }
      : input;
  const parsed = flowFileSchema.safeParse(named);
  if (!parsed.success)
    throw new InvalidFileError(
      `${source}: not a valid flow: ${summarizeIssues(parsed.error, named)}`,
      'see schema/flow.schema.json, or examples/*.flow.json',
    );
  return parsed.data;
}
