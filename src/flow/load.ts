/**
 * Reading flow files (`NAME.flow.json`): JSON checked against the zod schema, with messages that name
 * the file, the line of a syntax error and the field at fault. A flow is told from a graph by its
 * extension.
 */
import { InvalidFileError } from '../errors.js';
import { parseJsonText, readTextFile } from '../graph/load.js';
import { summarizeIssues } from '../graph/schema-issues.js';
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

/** Validates a parsed flow; `source` names it in messages. */
export function parseFlowObject(input: unknown, source: string): FlowFile {
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
