/**
 * Tables keyed by names users choose: nodes (visit counts) and variables. They have no prototype, so
 * `constructor`, `toString` or `__proto__` are keys like any other rather than members every object
 * inherits (a plain object would count visits to `constructor` onto `Object`, and drop `__proto__`).
 */

/** A table without a prototype holding `entries`' own properties; an empty one without `entries`. */
export function nameTable<T>(entries?: Readonly<Record<string, T>>): Record<string, T> {
  // Object.assign sets each key on the target, and a target without a prototype has no `__proto__`
  // setter to intercept it.
  return Object.assign(Object.create(null) as Record<string, T>, entries);
}

/** `tables` merged into one new table, later ones winning. */
export function mergedTable<T>(tables: readonly Readonly<Record<string, T>>[]): Record<string, T> {
  return Object.assign(Object.create(null) as Record<string, T>, ...tables) as Record<string, T>;
}
