/** JSON text that does not depend on key order: the same value always gives the same text. A leaf module. */

/** `value` as JSON with the keys of every object sorted, so the order a file or a model wrote them in does not matter. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    typeof inner === 'object' && inner !== null && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}
