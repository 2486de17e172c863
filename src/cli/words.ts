/** Wording the commands share, apart from any one command's report so that none depends on another's. */

/** `1 model call`, `2 model calls`. */
export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
