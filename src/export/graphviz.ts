/**
 * The one Graphviz (WASM) instance of the process. Creating it compiles the WebAssembly module, which
 * takes a noticeable moment, so every caller shares the same promise; the package itself loads on first
 * use too, so exporting DOT, JSON, CSV or Mermaid never loads it.
 */
import type { Viz } from '@viz-js/viz';

let shared: Promise<Viz> | undefined;

/** Resolves to the shared Graphviz instance, creating it on first use; a failed start is retried next call. */
export function graphviz(): Promise<Viz> {
  shared ??= import('@viz-js/viz')
    .then(({ instance }) => instance())
    .catch((error: unknown) => {
      shared = undefined;
      throw error;
    });
  return shared;
}
