/**
 * How a node is marked wherever it is listed. Each state has a marker character as well as a colour,
 * so the graph reads the same with `NO_COLOR` set or on a monochrome terminal.
 */
import type { TurnEdits } from './run-state.js';
import type { Role } from './theme.js';

/** The markers and the colour role of one node. */
export interface NodeMarks {
  /** `▶` current, `•` visited, space otherwise. */
  run: string;
  /** `+` added, `~` changed by this turn's edits, space otherwise. */
  edit: string;
  /** The role that colours the name; the current node wins over an edit, an edit over a visit. */
  role?: Role;
}

/** What the graph panel and the inspector need to know to mark nodes. */
export interface MarkSource {
  current?: string;
  visited: ReadonlySet<string>;
  lastEdit?: TurnEdits;
}

/** The marks of node `name`. */
export function nodeMarks(name: string, source: MarkSource): NodeMarks {
  const isCurrent = source.current === name;
  const visited = source.visited.has(name);
  const added = source.lastEdit?.added.includes(name) ?? false;
  const changed = source.lastEdit?.changed.includes(name) ?? false;
  const run = isCurrent ? '▶' : visited ? '•' : ' ';
  const edit = added ? '+' : changed ? '~' : ' ';
  const role: Role | undefined = isCurrent
    ? 'current'
    : added
      ? 'added'
      : changed
        ? 'changed'
        : visited
          ? 'visited'
          : undefined;
  return role ? { run, edit, role } : { run, edit };
}

/** The key to the markers, for panel titles and the help overlay. */
export const LEGEND = '▶ current  • visited  + added  ~ changed  › selected';
