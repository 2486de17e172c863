/**
 * The one Graphviz (WASM) instance of the process. Creating it compiles the WebAssembly module, which
 * takes a noticeable moment, so every caller shares the same promise.
 */
import { instance, type Viz } from '@viz-js/viz';

let shared: Promise<Viz> | undefined;

/** Resolves to the shared Graphviz instance, creating it on first use; a failed start is retried next call. */
export function graphviz(): Promise<Viz> {
  shared ??= instance().catch((error: unknown) => {
    shared = undefined;
    throw error;
  });
  return shared;
}
