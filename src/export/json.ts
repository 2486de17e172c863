/** Graph or flow -> its native JSON file, pretty-printed. */
import type { FlowFile } from '../flow/schema.js';
import type { GraphFile } from '../graph/schema.js';

/**
 * The file as indented JSON with a final newline, ready to save as `NAME.autogram.json` (a graph) or
 * `NAME.flow.json` (a flow).
 */
export function toJson(file: GraphFile | FlowFile): string {
  return `${JSON.stringify(file, null, 2)}\n`;
}
