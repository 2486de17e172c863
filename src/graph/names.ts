/** Rules for node names, and the "did you mean" suggestion used when a name is not found. */

/**
 * Why a node name cannot be used, or undefined when it can. Transition strings give meaning to some
 * spellings (`quit`, `return x`, `$var`, `p.*`, `u.n`), and CSV transition lists are comma-separated,
 * so a node named like that could never be the target of a transition.
 */
export function nodeNameProblem(name: string): string | undefined {
  if (name.trim() !== name) return 'has leading or trailing spaces';
  const control = controlCharacterProblem(name);
  if (control) return control;
  if (name === 'quit' || name === 'return' || name.startsWith('return '))
    return `"${name.split(' ')[0]}" is a reserved transition word`;
  if (name.startsWith('$')) return 'starts with "$", which marks a variable transition';
  if (name.endsWith('.*')) return 'ends with ".*", which marks a wildcard transition';
  if (name.endsWith('.n')) return 'ends with ".n", which marks a visit-numbered transition';
  if (!name.includes('(') && name.includes(',')) return 'contains a comma, which separates transitions';
  return undefined;
}

/**
 * A control character (U+0000–U+001F, U+007F–U+009F) in a name: a terminal does not show it, a newline
 * or tab makes two names look alike, and XML forbids most of them, so an SVG or HTML drawing of the
 * graph could not hold the name.
 */
function controlCharacterProblem(name: string): string | undefined {
  const control = /\p{Cc}/u.exec(name)?.[0];
  if (control === undefined) return undefined;
  const code = `U+${control.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  return `${JSON.stringify(name)} contains the control character ${code}; names are printable text`;
}

/** The candidate closest to `name` by edit distance, when it is close enough to be a likely typo. */
export function closestName(name: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  // One slip in a short name, more in a long one; never a whole name's worth of changes.
  let bestDistance = Math.min(name.length <= 4 ? 1 : name.length <= 8 ? 2 : 3, name.length - 1) + 1;
  for (const candidate of candidates) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, j) => j)];
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const above = rows[i - 1]!;
      let cost = Math.min(above[j]! + 1, row[j - 1]! + 1, above[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        cost = Math.min(cost, rows[i - 2]![j - 2]! + 1);
      row.push(cost);
    }
    rows.push(row);
  }
  return rows[a.length]![b.length]!;
}
