/** Which names and addresses are this machine's own: a server on them is out of other machines' reach. */

/** `localhost`, `127.x.x.x` or `::1` (also `[::1]`, as a Host header writes it). */
export function isLoopback(host: string): boolean {
  const name = host.toLowerCase();
  return name === 'localhost' || name === '::1' || name === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(name);
}
