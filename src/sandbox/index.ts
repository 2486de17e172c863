/**
 * The sandbox: JavaScript of code nodes, conditions and call arguments, run in isolated-vm, and the
 * regular expressions a file supplies (patterns.ts), matched under the same limits.
 * See sandbox.ts for the model (one isolate per run, and in it one context every evaluation reuses).
 */
export { Sandbox, type NextCondition, type RunCodeResult, type Where } from './sandbox.js';
export { SandboxError, type SandboxErrorKind } from './sandbox-error.js';
export {
  DEFAULT_SANDBOX_CEILING,
  DEFAULT_SANDBOX_LIMITS,
  SANDBOX_CEILING_VARIABLES,
  sandboxCeiling,
  type SandboxLimits,
} from './limits.js';
export { PatternError, PatternSandbox, withSandboxedRegExps } from './patterns.js';
export type { HostFunction } from './host-functions.js';
export { CodeSandboxes, type CodeRunner } from './code-sandboxes.js';
export { PythonSandbox } from './python/python-sandbox.js';
export { PythonRuntime } from './python/python-runtime.js';
