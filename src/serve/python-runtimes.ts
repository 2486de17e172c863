/**
 * A Python runtime for each owner a server serves. Python's state lives as long as its runtime, and
 * code that reaches the runtime's internals reaches every evaluation made in it (see PythonSandbox): so
 * one owner's agents never share a runtime with another's. Each runtime loads on its owner's first
 * Python evaluation and stays for the process.
 */
import { PythonRuntime } from '../sandbox/index.js';

const byOwner = new Map<string, PythonRuntime>();

/** `owner`'s runtime, made when first asked for. */
export function pythonRuntimeOf(owner: string): PythonRuntime {
  let runtime = byOwner.get(owner);
  if (!runtime) byOwner.set(owner, (runtime = new PythonRuntime()));
  return runtime;
}
