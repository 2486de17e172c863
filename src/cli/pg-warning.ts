/**
 * Keeps one warning of the `pg` driver off the user's stderr: DBOS Transact queries a client that is
 * already busy, which pg 8 flags as deprecated ("Calling client.query() when the client is already
 * executing a query"). It says nothing a meta-agent user can act on, and it comes once per process, on
 * the first durable work. Every other warning is printed as Node prints it.
 */

const PG_BUSY_CLIENT = 'Calling client.query() when the client is already executing a query';

let quiet = false;

/** Filters that one warning from now on (once per process). */
export function quietPgBusyClientWarning(): void {
  if (quiet) return;
  quiet = true;
  const printers = process.listeners('warning');
  process.removeAllListeners('warning');
  process.on('warning', (warning) => {
    if (warning.name === 'DeprecationWarning' && warning.message.startsWith(PG_BUSY_CLIENT)) return;
    for (const print of printers) print(warning);
  });
}
