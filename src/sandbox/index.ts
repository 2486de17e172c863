/**
 * The sandbox: JavaScript of code nodes, conditions and call arguments, run in isolated-vm.
 * See sandbox.ts for the model (one isolate per run, and in it one context every evaluation reuses).
 */
export { Sandbox, type RunCodeResult, type Where } from './sandbox.js';
export { SandboxError, type SandboxErrorKind } from './sandbox-error.js';
export { DEFAULT_SANDBOX_LIMITS, type SandboxLimits } from './limits.js';
export type { HostFunction } from './host-functions.js';
