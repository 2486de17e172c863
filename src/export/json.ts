/** Graph -> the native `.autogram.json` file, pretty-printed. */
import type { GraphFile } from '../graph/schema.js';

/** The graph file as indented JSON with a final newline, ready to save as `NAME.autogram.json`. */
export function toJson(file: GraphFile): string {
  return `${JSON.stringify(file, null, 2)}\n`;
}
