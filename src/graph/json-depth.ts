/**
 * How deep a parsed JSON value nests. What reads a file's values after `JSON.parse` (zod's `z.json()`,
 * JSON Schema conversion, copies, renderers) recurses once a level, so a file nesting thousands deep
 * would exhaust the stack in one of them and end as a crash. The depth is checked first, with a loop,
 * so such a file is refused in one line that names the field.
 */
import { InvalidFileError } from '../errors.js';

/** Objects and arrays within one another a file may hold: JSON a person writes nests a few levels. */
export const MAX_JSON_DEPTH = 100;

/** Path segments named in a message before the rest is cut to `…`. */
const SHOWN_SEGMENTS = 6;

/** An object or array on the way down, and how it was reached. */
interface Level {
  value: object;
  depth: number;
  key?: string | number;
  parent?: Level;
}

/**
 * The path (keys and indices) to the first object or array nested deeper than `limit`, counting the
 * outermost as 1; undefined when none is.
 */
export function pathBeyondDepth(value: unknown, limit = MAX_JSON_DEPTH): (string | number)[] | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const pending: Level[] = [{ value, depth: 1 }];
  for (let level = pending.pop(); level !== undefined; level = pending.pop()) {
    if (level.depth > limit) return pathOf(level);
    const entries: [string | number, unknown][] = Array.isArray(level.value)
      ? level.value.map((item, index) => [index, item])
      : Object.entries(level.value);
    for (const [key, child] of entries)
      if (child !== null && typeof child === 'object')
        pending.push({ value: child, depth: level.depth + 1, key, parent: level });
  }
  return undefined;
}

/**
 * Refuses a file's parsed JSON that nests deeper than `limit`, naming the field (`source` names the
 * file). @throws InvalidFileError (exit code 2).
 */
export function checkJsonDepth(value: unknown, source: string, limit = MAX_JSON_DEPTH): void {
  const path = pathBeyondDepth(value, limit);
  if (path === undefined) return;
  throw new InvalidFileError(
    `${source}: ${describePath(path)} nests more than ${limit} levels deep`,
    `objects and arrays in a file may nest at most ${limit} deep: flatten the value`,
  );
}

function pathOf(level: Level): (string | number)[] {
  const path: (string | number)[] = [];
  for (let at: Level | undefined = level; at?.key !== undefined; at = at.parent) path.push(at.key);
  return path.reverse();
}

/** `database.d.k[0].k…`: the first few segments of the path, as a field is written. */
function describePath(path: readonly (string | number)[]): string {
  const segments = path
    .slice(0, SHOWN_SEGMENTS)
    .map((key, i) =>
      typeof key === 'number'
        ? `[${key}]`
        : /^[A-Za-z_$][\w$]*$/.test(key)
          ? `${i === 0 ? '' : '.'}${key}`
          : `[${JSON.stringify(key)}]`,
    )
    .join('');
  return `${segments}${path.length > SHOWN_SEGMENTS ? '…' : ''}`;
}
